"""Run files: a run as JSON data and back, its shape checked before any of it is used."""
