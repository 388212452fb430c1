"""Sample rigs for the demo and the tests; ``make_rigs.py`` builds them (see README.md here)."""
