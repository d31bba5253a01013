#ifndef RB_SHA1_H
#define RB_SHA1_H

/* SHA1 (FIPS 180-4), for the digest of an --expect list that every party
 * sends in place of the list and the scripts check with redis.sha1hex.
 * Agreement among parties, not secrecy: SHA1 is what Redis' Lua has. */

#include <stddef.h>

/* hex: 40 lowercase hex digits and a NUL. */
void rb_sha1_hex(const void *data, size_t len, char hex[41]);

#endif
