"""Benchmarks that run locally on real pages."""
