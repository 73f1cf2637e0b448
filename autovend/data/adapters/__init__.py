"""Adapters that turn public or operator exports into source folders under the raw-records contract.

- :mod:`autovend.data.adapters.nj_vending`: the public 2022 New Jersey export ("Vending Machine Sales",
  Kaggle), command ``autovend adapt nj-vending CSV -o DIR``.
"""
