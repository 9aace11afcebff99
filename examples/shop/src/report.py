from src.prices import compute_total


def daily_report(orders):
    # TODO: group by customer
    return [compute_total(order) for order in orders]
