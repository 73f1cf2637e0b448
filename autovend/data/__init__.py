"""Raw records: the contract, its checker, and the sources (synthetic operator, real-data adapters)."""
