"""Thin DVC stage entry points."""
