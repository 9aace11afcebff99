def compute_total(items):
    """Sums the price of every item."""
    return sum(item["price"] for item in items)
