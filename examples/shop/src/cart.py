from src.prices import compute_total


def checkout(items):
    """Returns the amount to charge for the items."""
    return compute_total(items)
