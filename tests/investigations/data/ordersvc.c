/* A stand-in for a service whose two sides burn their CPU in different places: "ordersvc a"
 * spends it in p256_point_mul (as side A did in a real case: elliptic-curve crypto of TLS
 * handshakes), "ordersvc b" in encode_json. Built with frame pointers so that perf -g sees
 * the whole stack: main -> handle_request -> the hot function. */
#include <stdlib.h>
#include <string.h>

static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long p256_point_mul(unsigned long x) {
    for (int i = 0; i < 20000; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

__attribute__((noinline)) static unsigned long encode_json(unsigned long x) {
    for (int i = 0; i < 20000; i++) x ^= (x << 7) + (x >> 3) + (unsigned long)i;
    return x;
}

__attribute__((noinline)) static unsigned long parse_headers(unsigned long x) {
    for (int i = 0; i < 2000; i++) x += (x >> 5) ^ (unsigned long)i;
    return x;
}

__attribute__((noinline)) static void handle_request(int side_a, unsigned long n) {
    unsigned long x = parse_headers(n);
    sink = side_a ? p256_point_mul(x) : encode_json(x);
}

int main(int argc, char **argv) {
    int side_a = argc > 1 && strcmp(argv[1], "a") == 0;
    for (unsigned long n = 0;; n++) handle_request(side_a, n);
    return 0;
}
