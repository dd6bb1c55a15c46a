def crlf_helper(x):
    return x * 2
