"""Price helpers."""


def net_price(gross, rate):
    """Remove VAT at rate percent from gross."""
    return round(gross / (1 + rate / 100), 2)


def gross_price(net, rate):
    """Add VAT at rate percent to net."""
    return round(net * (1 + rate / 100), 2)
