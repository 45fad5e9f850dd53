"""The engine's tools, apart from its core: the `engine` command, quality eval, benchmarks, synthetic vaults."""
