"""The simulation engine: kernels, their tables, the plan that chooses among them, and the exact handling of ties."""
