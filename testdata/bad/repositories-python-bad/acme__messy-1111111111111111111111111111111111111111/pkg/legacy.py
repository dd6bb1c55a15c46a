# no coding cookie, but latin-1 bytes


def défaut():
    return "café"
