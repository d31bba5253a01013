/*
 * Where this host is reached from the others: the local address of a
 * connection to Redis, which every member reaches, so that address is
 * routable where nothing else is known (a job's MASTER_ADDR,
 * rb_job_rdv.c).
 */
#include "fmacros.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>

#include "rb_router.h"

/* "127.0.0.1" over a unix socket (every member is on this host then). */
static int node_addr(const rb_node *n, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    const void *a;
    int fd = rb_node__fd(n);

    if (fd < 0)
        return -1;
    if (rb_node__is_unix(n))
        return snprintf(buf, len, "127.0.0.1") < (int)len ? 0 : -1;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) != 0)
        return -1;
    if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&ss;

        /* A v4 peer over a dual-stack socket: the plain v4 address. */
        if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
            return inet_ntop(AF_INET, s6->sin6_addr.s6_addr + 12, buf,
                             (socklen_t)len) ? 0 : -1;
        a = &s6->sin6_addr;
    } else if (ss.ss_family == AF_INET) {
        a = &((const struct sockaddr_in *)&ss)->sin_addr;
    } else {
        return -1;
    }
    return inet_ntop(ss.ss_family, a, buf, (socklen_t)len) ? 0 : -1;
}

int rb_conn__local_addr(const rb_conn *c, char *buf, size_t len)
{
    int i;

    if (c->last >= 0 && c->last < c->nnodes &&
        node_addr(c->nodes[c->last], buf, len) == 0)
        return 0;
    for (i = 0; i < c->nnodes; i++)
        if (node_addr(c->nodes[i], buf, len) == 0)
            return 0;
    return -1;
}
