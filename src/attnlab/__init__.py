"""attnlab: attention mechanisms to learn, check, run and show.

- ``attnlab.ref``: NumPy reference of every attention form (the oracle and the textbook).
- ``attnlab.nn``: PyTorch functional core and thin ``nn.Module`` wrappers.
- ``attnlab.parity``: the one helper that holds an implementation against a float64 oracle.

Importing attnlab never trains, plots or downloads; those are commands (``attnlab --help``).
"""

__version__ = "0.1.0"
