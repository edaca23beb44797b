"""What test modules share: helpers, fixtures' bodies and program corpora. No tests here.

A test module never imports another test module; what two of them need lives here (or in a
conftest.py when it is a fixture every module of a folder uses).
"""
