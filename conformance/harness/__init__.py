"""The booblik conformance harness: drives a client command through a live broker and checks, with
its own wire reader, what actually happened."""
