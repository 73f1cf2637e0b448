"""The embedded synthetic operator: a Shanghai vending company generated from a known truth."""
