#ifndef RB_TORCH_ENV_H
#define RB_TORCH_ENV_H

/* torchrun's environment for a job member's command (torch_env.c), and
 * the host identity members are grouped by. */

#include <stddef.h>

#include "rbarrier.h"

#define CLI_TORCH_VARS 14
#define CLI_MASTER_ADDR_MAX 63

typedef struct cli_torch_env {
    char text[CLI_TORCH_VARS][RB_NAME_MAX + 64];
} cli_torch_env;

/* This host's identity: $RBARRIER_HOST, else /etc/machine-id, else the
 * host name. RB_OK, or RB_EINVAL with err (a bad $RBARRIER_HOST). */
int cli_host_id(char *buf, size_t len, rb_error *err);

/* --master-addr A (NULL: not given): an IPv4/IPv6 address or host name. */
int cli_check_master_addr(const char *a, rb_error *err);

/* Fill env[0..] with the variables (never TORCHELASTIC_USE_AGENT_STORE
 * true) after rb_job_enter; addr and port (NULL, 0) override rank 0's.
 * Returns how many env entries were set. */
int cli_torch_env_build(cli_torch_env *t, const rb_job *j,
                        const rb_job_opts *o, const char *addr, int port,
                        const char **env);

/* --nproc-per-node P (nproc.c): every member ID.k's options are good (as
 * its runner will check them), so nothing starts on bad input. */
int cli_nproc_check(const rb_job_opts *o, long p, rb_error *err);
/* Start P runners of this program here, as argv (its command after
 * argv[cmd_at], "--") with --id ID.k and without --nproc-per-node; wait
 * for them all, passing on TERM, INT and HUP. Returns the exit code: the
 * first status of a member's own failure, else 3 if the job broke, else
 * the signal's or 0. */
int cli_nproc_run(int argc, char **argv, int cmd_at, long p, const char *id);

#endif
