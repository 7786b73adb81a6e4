"""Benchmark suite: lancefile against pylance 14.0.2 and pyarrow.parquet (``python -m bench``)."""
