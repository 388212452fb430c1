"""quat-ik tests. A package so helpers import as ``tests.helpers`` and same-named test files
in different folders do not clash."""
