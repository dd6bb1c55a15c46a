#include <stddef.h>

// Checksum of a buffer; the platform picks the signature.
#if defined(_WIN32)
size_t __stdcall buf_sum(const unsigned char *p, size_t n)
#elif defined(USE_WIDE)
size_t buf_sum(const unsigned char *p, unsigned long long n)
#else
size_t buf_sum(const unsigned char *p, size_t n)
#endif
{
    size_t s = 0;
    while (n--) {
        s += *p++;
    }
    return s;
}

#ifdef PACKED_RECORDS
struct record_packed
#else
struct record
#endif
{
    int id;
    double weight;
};

int buf_empty(size_t n)
{
    return n == 0;
}
