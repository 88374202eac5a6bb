"""Benchmarks against real sshd test hosts (tests/sshd.py); run as `python -m tests.bench.NAME`."""
