def broken(:
    return (

def after_broken(x):
    return x + 1
