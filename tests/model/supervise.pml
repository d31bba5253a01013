/*
 * The supervisor's deadline (cli/supervise.c, cli/watchdog.c), in discrete
 * time: a holder A runs a command while it holds a right (a lock slot, a
 * job's rank, a --once claim) whose lease the server keeps; the server
 * hands the right to B once A's lease has passed by the server's clock.
 * A's runner renews (each renewal may be delayed, lost, or its reply
 * lost), may be stopped for ever (SIGSTOP, a partition) or killed; only
 * the watchdog, which speaks no Redis, holds the deadline it was fed.
 *
 * The start: the watchdog is forked before the right is held and waits
 * for the go; once granted, the runner sends it the first deadline ('D')
 * and then the go ('G'), which carries the right's kill point. Either may
 * be delayed (the runner stopped or killed before or between them, the
 * watchdog slow to read the go): the watchdog starts the command only if
 * the kill point has not passed when it reads the go.
 *
 * What is checked: the command is never running when B is granted (no two
 * holders, not even for a moment), and the watchdog is never fed a
 * deadline later than the server's.
 *
 * Time: `now` ticks; the tick waits while an action due at this tick is
 * pending (the watchdog acts when its deadline comes: it is never
 * stopped). A renewal sent at s is received at r >= s (the server's lease
 * then ends at r + L); its reply reaches the runner later or never; the
 * runner then feeds the watchdog s + L (the send time: a renewal received
 * late only moves the server's deadline later). The watchdog kills the
 * tree at fed - M. When the runner dies its pipe closes and the watchdog
 * kills at once (no later than its deadline).
 *
 * Not modelled: the server's and client's clocks running at different
 * rates (M covers that, and the time SIGKILL takes to land), the
 * SIGTERM point before the kill (it only ends the command sooner).
 *
 * Seeded bugs: MUT_SUP_STOP_AT_LEASE_END (the stop starts at the lease's
 * end: M = 0, and the kill may come after the grant), MUT_SUP_FEED_ACK_TIME
 * (the watchdog is fed the reply's arrival + L, not the send time),
 * MUT_SUP_NO_WATCHDOG (only the runner stops the command: a stopped runner
 * never does), MUT_SUP_GO_BEFORE_DEADLINE (the go is sent before the
 * watchdog's first deadline: a runner stopped between the two leaves a
 * command that nothing stops), MUT_SUP_GO_NO_DEADLINE (the command
 * starts on a go read after the kill point).
 */

#define L 4      /* the lease, in ticks */
#ifdef MUT_SUP_STOP_AT_LEASE_END
#define M 0
#else
#define M 1      /* the margin before the lease's end */
#endif
#define MAXT 14  /* the horizon */

#define NONE 255        /* the watchdog has no deadline yet */

byte now = 0;
byte srv_until = L;     /* A's lease by the server (granted at 0) */
bool granted_b = false;
bool cmd_running = false;  /* not born before its go */
byte fed = NONE;        /* what the watchdog was told: A holds until fed */
bool go_sent = false;   /* the runner's go, to the watchdog */
byte go_kill_at;        /* the kill point the go carries */
bool go_read = false;   /* the watchdog read the go (and started the
                           command, or not) */
bool runner_dead = false;
bool runner_stopped = false;

/* A renewal in flight: sent at sent_at, not yet received. */
bool in_flight = false;
byte sent_at;
/* Its reply in flight: the server took it. */
bool reply_in_flight = false;
byte reply_sent_at;

#define KILL_AT (fed - M)
/* The watchdog has something to do at this tick. */
#ifdef MUT_SUP_NO_WATCHDOG
#define WATCHDOG_DUE false
#else
#define WATCHDOG_DUE (cmd_running && (now >= KILL_AT || runner_dead))
#endif

active proctype clock()
{
	do
	:: atomic { now < MAXT && !WATCHDOG_DUE -> now++ }
	:: now >= MAXT -> break
	od
}

active proctype watchdog()
{
#ifndef MUT_SUP_NO_WATCHDOG
	do
	:: atomic { WATCHDOG_DUE -> cmd_running = false }
	:: atomic { now >= MAXT -> break }
	od
#else
	skip
#endif
}

active proctype server()
{
	do
	:: atomic { in_flight && now >= sent_at ->
		/* received now: the lease runs from here */
		in_flight = false;
		if
		:: !granted_b ->
			srv_until = now + L;
			reply_in_flight = true;
			reply_sent_at = sent_at
		:: else    /* too late: B holds it; A learns it from the reply */
		fi }
	:: atomic { in_flight -> in_flight = false }     /* the renewal is lost */
	:: atomic { !granted_b && now >= srv_until ->
		/* A's lease has passed: B is granted, and B runs at once */
		assert(!cmd_running);
		granted_b = true }
	:: atomic { now >= MAXT -> break }
	od
}

/* The watchdog before the start: it reads the go whenever it gets the
 * CPU, and only then is the command born. */
active proctype birth()
{
	do
	:: atomic { go_sent && !go_read ->
		go_read = true;
#ifdef MUT_SUP_GO_NO_DEADLINE
		cmd_running = true
#else
		if
		:: now < go_kill_at -> cmd_running = true
		:: else           /* the kill point passed: never starts */
		fi
#endif
	   }
	:: atomic { now >= MAXT -> break }
	od
}

active proctype runner()
{
	do
	/* Granted at 0: the watchdog's first deadline, then the go, each
	 * only while the right's kill point (by the runner's count) has not
	 * passed. */
	:: atomic { !runner_stopped && !runner_dead && fed == NONE &&
	            now < L - M -> fed = L }
	:: atomic { !runner_stopped && !runner_dead && !go_sent &&
#ifndef MUT_SUP_GO_BEFORE_DEADLINE
	            fed != NONE &&
#endif
	            now < L - M -> go_sent = true; go_kill_at = L - M }
	:: atomic { !runner_stopped && !runner_dead && !in_flight &&
	            !reply_in_flight && cmd_running && now + L <= MAXT ->
		in_flight = true; sent_at = now }
	:: atomic { reply_in_flight && !runner_stopped && !runner_dead ->
		reply_in_flight = false;
#ifdef MUT_SUP_FEED_ACK_TIME
		if :: now + L > fed -> fed = now + L :: else fi
#else
		if :: reply_sent_at + L > fed -> fed = reply_sent_at + L :: else fi
#endif
		;
		/* never later than the server's own deadline */
		assert(fed <= srv_until || granted_b) }
	:: atomic { reply_in_flight -> reply_in_flight = false }  /* reply lost */
#ifdef MUT_SUP_NO_WATCHDOG
	/* the runner's own stop, by its own clock, when it can still act */
	:: atomic { !runner_stopped && !runner_dead && cmd_running &&
	            now >= KILL_AT -> cmd_running = false }
#endif
	:: atomic { !runner_stopped && !runner_dead -> runner_stopped = true }
	:: atomic { !runner_dead -> runner_dead = true }
	:: atomic { now >= MAXT -> break }
	od
}
