# Installed by `make install` into .venv/etc/ipython/, read by every kernel that papermill and nbval start. Two
# messages of ipykernel say nothing about the book and are filtered out (every other kernel message is kept):
# - the kernels talk to their parent over local TCP sockets, and ipykernel warns about that on every start;
# - jupyter_client begins every kernel shutdown with an interrupt (SIGINT), and when that signal lands while the
#   kernel is still finishing a message handler (publishing "idle" after the last cell, say) ipykernel logs
#   "KeyboardInterrupt caught in kernel." as an error, on a chapter that ran to its end. A Ctrl-C of `make` never
#   reaches a kernel this way (config/execute_chapter.py stops the kernel with SIGTERM), and an interrupt during a
#   cell shows as that cell's traceback, so the message only ever reports the shutdown.
import logging

NOTICES = ("running over TCP without encryption", "KeyboardInterrupt caught in kernel")


class _BookNotices(logging.Filter):
    def filter(self, record):
        message = record.getMessage()
        return not any(notice in message for notice in NOTICES)


for _name in ("IPKernelApp", "traitlets"):
    logging.getLogger(_name).addFilter(_BookNotices())
