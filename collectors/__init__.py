"""Perfcase's collection library: SSH, remote probes and pure parsers. No Django here."""
