"""Adapters that turn public or operator exports into source folders under the raw-records contract.

- :mod:`autovend.data.adapters.table`: any one-table export (one row per order line) with a YAML mapping
  (:mod:`~autovend.data.adapters.mapping`), command ``autovend adapt table FILE --map MAPPING -o DIR``.
- :mod:`autovend.data.adapters.nj_vending`: the public 2022 New Jersey export ("Vending Machine Sales",
  Kaggle), its packaged mapping ``nj_vending.yaml``, command ``autovend adapt nj-vending CSV -o DIR``.
"""
