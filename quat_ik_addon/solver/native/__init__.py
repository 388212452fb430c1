"""The solver's native kernel: C inner loops (``kernel/``) behind a ctypes binding.

The numpy solver is the reference and the fallback: ``library.load()`` says whether the
kernel runs here and why not; ``kernel_calls.run_method`` runs ``methods.run_method`` on it with the
same answers to rounding; ``packing`` turns a ``Chain`` into the C structs of ``abi``.
Nothing here imports ``bpy``.
"""
