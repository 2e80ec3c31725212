"""engine/addresses.py: the addresses read from a list are the ids of its items."""

from __future__ import annotations

import pytest

from service.engine import addresses


@pytest.mark.parametrize("size", [0, 1, 7, 1000])
def test_addresses_are_the_ids(size: int) -> None:
    items = [object() for _ in range(size)]
    assert addresses.addresses(items).tolist() == [id(x) for x in items]
    assert addresses._addresses_mapped(items).tolist() == [id(x) for x in items]
    assert addresses._read_works()  # CPython: the lists are read without Python code per item
