# Installed by `make install` into .venv/etc/ipython/: the kernels that papermill and nbval start talk to their
# parent over local TCP sockets, and ipykernel warns about that on every start. The warning says nothing about the
# book, so it is filtered out (every other kernel message is kept).
import logging


class _LocalTcpNotice(logging.Filter):
    def filter(self, record):
        return "running over TCP without encryption" not in record.getMessage()


for _name in ("IPKernelApp", "traitlets"):
    logging.getLogger(_name).addFilter(_LocalTcpNotice())
