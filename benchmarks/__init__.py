"""Benchmarks: dpstats against the computational floor and against peer libraries."""
