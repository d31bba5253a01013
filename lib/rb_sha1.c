/* rb_sha1.h: a plain SHA1, one call over one buffer. */
#include "fmacros.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rb_sha1.h"

#define ROL(x, n) (((x) << (n)) | ((x) >> (32 - (n))))

static void block(uint32_t h[5], const unsigned char *p)
{
    uint32_t w[80], a, b, c, d, e, f, k, t;
    int i;

    for (i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (i = 16; i < 80; i++)
        w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (i = 0; i < 80; i++) {
        if (i < 20)
            f = (b & c) | (~b & d), k = 0x5A827999;
        else if (i < 40)
            f = b ^ c ^ d, k = 0x6ED9EBA1;
        else if (i < 60)
            f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
        else
            f = b ^ c ^ d, k = 0xCA62C1D6;
        t = ROL(a, 5) + f + e + k + w[i];
        e = d, d = c, c = ROL(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

void rb_sha1_hex(const void *data, size_t len, char hex[41])
{
    uint32_t h[5] = { 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476,
                      0xC3D2E1F0 };
    const unsigned char *p = data;
    unsigned char tail[128];
    uint64_t bits = (uint64_t)len * 8;
    size_t left = len % 64, tlen = left < 56 ? 64 : 128, i;

    for (i = 0; i + 64 <= len; i += 64)
        block(h, p + i);
    /* The last bytes, a 1 bit, zeros, and the length in bits. */
    memset(tail, 0, sizeof(tail));
    if (left)
        memcpy(tail, p + len - left, left);
    tail[left] = 0x80;
    for (i = 0; i < 8; i++)
        tail[tlen - 1 - i] = (unsigned char)(bits >> (8 * i));
    block(h, tail);
    if (tlen == 128)
        block(h, tail + 64);
    for (i = 0; i < 5; i++)
        snprintf(hex + 8 * i, 9, "%08x", (unsigned)h[i]);
}
