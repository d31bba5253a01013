/*
 * The barrier protocol of rbarrier (DESIGN.md "Barrier protocol"), as the
 * scripts in lua/ must implement it once a --once run is claimed by its own
 * script: each script is one atomic step (Redis runs a script atomically),
 * each party one process. doc/PROTOCOL.md maps every inline below to its
 * script and C function.
 * History events are not modelled: they decide nothing (each script's
 * append to the name's history, lua/includes/history.lua, is read by no
 * script).
 *
 * Configuration (-D on spin's command line; see the Makefile):
 *   N        parties (2..4)               CALLS    wait calls per party
 *   ONCE     bitmask: parties with --once  CRASHES  parties that may die
 *   LOSSES   replies the network may lose  SIGNALS  timeouts or signals
 *   STALLS   live leases that may run out  RESETS   reset calls
 *   FAILS    --once commands that may fail
 *   EARLY_CRASH  a party may die before it arrives (not for TERM: a party
 *            that never arrives keeps a party with no timeout waiting, as
 *            documented)
 *   TIMEOUT  every party has a --timeout of that many wait slices
 *            (else it waits as long as it takes, --timeout 0)
 *   LATE_CRASH  a party dies only after its round is full (see below)
 *   TERM     check termination (an LTL claim, run with pan -a -f)
 * Not modelled: the count c the barrier hash keeps apart from the in key
 * (in[] below is both, so c always equals the in key's size), and keys that
 * expire or are lost apart from each other (an open round's in key
 * outliving the barrier hash, a hash deleted by hand, a party of the
 * previous build on the same name). The scripts guard those outside the
 * model: a duplicate arrival needs the in key's size equal to c, a
 * completing one c + 1, or the round is broken as lost, never passed
 * (arrive-2.lua; tests/integration/t_stale.sh).
 * A heartbeat's renewal may end before dl (a shorter lease under the same
 * id, a clock stepped back); the script then lowers dl (MUT_HB_NO_LOWER_DL
 * leaves it).
 * Seeded bugs (make model-mutants): MUT_RELEASE_N1, MUT_RETRY_TWICE,
 *   MUT_HB_NO_LEASE, MUT_RESET_ONCE, MUT_CLAIM_NO_CHECK, MUT_NO_WITHDRAW,
 *   MUT_RELEASE_NO_CHECK, MUT_DL_SKIP, MUT_DL_NO_LOWER, MUT_HB_RAISES_DL,
 *   MUT_HB_NO_LOWER_DL, MUT_RECORD_PRUNED.
 * Each party's arrival record (rb:b:{NAME}:i:<id>) is never lost here: the
 * scripts let it expire only after the call's resend window, when no
 * resend or withdraw can come. A break's reason, bounded to counts and the
 * first few ids (includes/roster.lua), is not modelled: one outcome BRK.
 */

#ifndef N
#define N 2
#endif
#ifndef CALLS
#define CALLS 1
#endif
#ifndef ONCE
#define ONCE 0
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef LOSSES
#define LOSSES 1
#endif
#ifndef SIGNALS
#define SIGNALS 1
#endif
#ifndef STALLS
#define STALLS 0
#endif
#ifndef RESETS
#define RESETS 0
#endif
#ifndef FAILS
#define FAILS 0
#endif

/* rounds: gen starts at 1, and every round that ends moves gen on */
#define NR (N * CALLS + 3)

/* outcomes (the head of a round's out list) and party results */
#define NONE 0
#define OK   1
#define BRK  2      /* broken <reason>: the reason is not modelled */
#define UNK  3      /* the party could not learn its round's outcome */
#define GAVEUP 4    /* the party left without telling (its own failure) */

/* arrive's answers */
#define WAIT 1
#define DONE 2
#define RUN  3

#ifdef MUT_RELEASE_N1
#define NEED (N - 1)
#else
#define NEED N
#endif

#define B(p) (1 << (p))
/* take one from an environment budget (guard and decrement in one step) */
#define TAKE(x) atomic { x > 0 -> x-- }

/* A party's own --timeout, counted in wait slices; without TIMEOUT it
 * waits as long as it takes (--timeout 0). A --once command runs for at
 * most CMD_SLICES slices (a command that never ends is a user's hang). */
#ifdef TIMEOUT
#define SLICE atomic { sl < TIMEOUT -> sl++ }
#define TIMED_OUT (sl >= TIMEOUT)
#else
#define SLICE true
#define TIMED_OUT false
#endif
/* LATE_CRASH: a party dies only once its round is full (all N arrived).
 * Termination without timeouts assumes it: a party that dies earlier
 * leaves a late party alone in a fresh round, waiting for nobody. */
#ifdef LATE_CRASH
#define CRASH_OK (g != 0 && POP(in[g]) == N)
#else
#define CRASH_OK true
#endif
/* the environment kills the party (SIGKILL, a lost machine): its lease
 * deadline will pass, and nothing else of it happens */
#define CRASH atomic { CRASH_OK && crashes > 0 -> crashes--; EXPIRE(p) }
/* p's lease deadline passes; dl, never later than a covered member's
 * deadline, has passed then too */
#define EXPIRE(p) expd = expd | B(p); dlx = dlx | ((cov >> (p)) & 1)
#ifndef CMD_SLICES
#define CMD_SLICES 2
#endif
#define POP(m) (((m) & 1) + (((m) >> 1) & 1) + (((m) >> 2) & 1) + (((m) >> 3) & 1))

/* ---- Redis: the barrier's keys ---- */
byte gen = 1;        /* rb:b:{NAME} gen */
byte in[NR];         /* rb:b:{NAME}:<gen>:in, as a set of party bits */
byte out[NR];        /* head of rb:b:{NAME}:<gen>:out */
byte runner[NR];        /* rb:b:{NAME}:<gen>:run: runner id + 1 */
bit claimed[NR];     /* the runner has claimed the --once run */
byte expd;           /* members whose lease deadline has passed */
/* rb:b:{NAME} dl, the earliest lease deadline the open round can hold,
 * which lets an arrival or a heartbeat skip reading the members: cov holds
 * the parties whose deadline is not before dl (every member of the open
 * round, when the scripts keep dl right), dlx says dl has passed */
byte cov;
bit dlx;
byte ncall[N];       /* rb:b:{NAME}:i:<id>: (nonce, gen, count) */
byte ngen[N];
byte ncnt[N];

/* ---- the environment's budgets ---- */
byte crashes = CRASHES;
byte losses = LOSSES;
byte signals = SIGNALS;
byte stalls = STALLS;
byte resets = RESETS;
byte fails = FAILS;

/* ---- ghosts: what the properties talk about ---- */
byte cur[N];         /* the party's current wait call (its nonce) */
byte rec[N];         /* the round that counted the current call, 0: none */
byte fin[N];         /* the party's last result (NONE while it waits) */
byte fgen[N];        /* ... and the round it was about */
bit reset_hit[NR];   /* a reset found the round without an outcome */
bit cmd_ok[NR];      /* the round's --once command exited 0 */
bit cmd_started[NR]; /* the round's --once command was started */
byte ended;          /* parties that are done (or dead) */

/* Push an outcome: the properties are checked here. */
inline push(r, x)
{
	assert(out[r] == NONE);                 /* one outcome per round */
	out[r] = x;
	for (q : 0 .. N - 1) {                  /* agreement, late pushes */
		if
		:: (fin[q] == OK || fin[q] == BRK) && fgen[q] == r ->
			assert(fin[q] == x)
		:: fin[q] == GAVEUP && fgen[q] == r ->
			assert(x != OK)     /* a failed arrival counts for nobody */
		:: else
		fi
	}
	if
	:: x == OK ->
		assert(POP(in[r]) == N);        /* validity: N ids ... */
		for (q : 0 .. N - 1) {          /* ... each counted in this round */
			if
			:: in[r] & B(q) -> assert(rec[q] == r)
			:: else
			fi
		}
		assert(!reset_hit[r]);          /* a reset round never passes */
		assert(runner[r] == 0 || cmd_ok[r]); /* once: ok only after exit 0 */
	:: else
	fi;
#ifdef MUT_RECORD_PRUNED
	/* the step that ends a round drops its members' arrival records (the
	 * scripts keep each in a key that expires after the call's resend
	 * window instead) */
	for (q : 0 .. N - 1) {
		if
		:: ngen[q] == r -> ncall[q] = 0
		:: else
		fi
	}
#endif
}

/* includes/round.lua break_round: push 'broken', move gen past the round
 * if it is the open one. */
inline brk(r)
{
	push(r, BRK);
	if
	:: gen == r -> gen++
	:: else
	fi
}

/* dl has passed: the arrival reads the round's earliest members */
#ifdef MUT_DL_SKIP
#define DL_PASSED false
#else
#define DL_PASSED dlx
#endif

/* arrive-2.lua: sets g and kind. */
inline arrive()
{
	atomic {
		if
#ifndef MUT_RETRY_TWICE
		:: ncall[p] == cur[p] ->
			/* a resend with this call's nonce: the first answer */
			g = ngen[p];
			if
			:: ncnt[p] >= NEED && isonce -> kind = RUN
			:: ncnt[p] >= NEED && !isonce -> kind = DONE
			:: else -> kind = WAIT
			fi
#endif
		:: else ->
			g = gen;
			if
			:: in[g] != 0 && DL_PASSED ->
				/* a member whose lease ran out: break, join a
				 * fresh round; else dl is set to the earliest
				 * member's deadline */
				if
				:: (in[g] & expd & ~B(p)) != 0 -> brk(g); g = gen
				:: else -> cov = in[g]; dlx = 0
				fi
			:: else     /* no round open, or no lease can have run out */
			fi;
			/* an arrival never joins a round one of whose members
			 * let its lease run out */
			assert((in[g] & expd & ~B(p)) == 0);
			/* at most once: one call is counted in one round only */
			assert(rec[p] == 0 || rec[p] == g);
			rec[p] = g;
			if
			:: in[g] == 0 -> cov = B(p); dlx = 0   /* dl := its deadline */
#ifdef MUT_DL_NO_LOWER
			:: in[g] != 0 -> if :: cov = cov | B(p) :: skip fi
#else
			:: in[g] != 0 -> cov = cov | B(p)      /* dl := min(dl, its) */
#endif
			fi;
			in[g] = in[g] | B(p);
			expd = expd & ~B(p);
			ncall[p] = cur[p];
			ngen[p] = g;
			ncnt[p] = POP(in[g]);
			if
			:: ncnt[p] >= NEED ->
				gen++;
				if
				:: isonce -> runner[g] = p + 1; kind = RUN
				:: else -> push(g, OK); kind = DONE
				fi
			:: else -> kind = WAIT
			fi
		fi
	}
}

/* heartbeat-4.lua: sets hres (NONE: still open). */
inline heartbeat()
{
	atomic {
		if
		:: out[g] != NONE -> hres = out[g]
		:: else ->
			expd = expd & ~B(p);
#ifndef MUT_HB_NO_LEASE
			if
			:: g == gen && !dlx ->
				/* none can have run out. The renewal may end before dl
				 * (a shorter lease under the same id, a server clock
				 * stepped back): dl is then lowered to it. */
				if
				:: skip  /* it ends at or after dl */
#ifdef MUT_HB_NO_LOWER_DL
				:: cov = cov & ~B(p)  /* ends before dl, left as it was */
#else
				:: cov = cov | B(p)   /* ends before dl: dl := its deadline */
#endif
				fi;
				hres = NONE
			:: else ->
				if
				:: (in[g] & expd) != 0 -> brk(g); hres = BRK
				:: else ->
					if
					:: g == gen -> cov = in[g]; dlx = 0  /* dl := the earliest */
					:: else
					fi;
					hres = NONE
				fi
			fi;
#ifdef MUT_HB_RAISES_DL
			if
			:: hres == NONE && g == gen -> cov = B(p); dlx = 0  /* dl := its own */
			:: else
			fi
#endif
#else
			hres = NONE
#endif
		fi
	}
}

/* abandon-3.lua: an outcome already there wins. */
inline abandon()
{
	atomic {
		if
		:: out[g] != NONE -> res = out[g]
		:: else -> brk(g); res = BRK
		fi
	}
}

/* The withdrawal of an arrival whose own call failed (its reply never
 * came): find the round by (id, nonce), and break it unless it has an
 * outcome, which is then this party's result. */
inline withdraw()
{
	atomic {
		if
		:: ncall[p] == cur[p] ->
			g = ngen[p];
#ifndef MUT_NO_WITHDRAW
			if
			:: out[g] != NONE -> res = out[g]
			:: else -> brk(g); res = BRK
			fi
#else
			res = GAVEUP
#endif
		:: else -> res = UNK
		fi
	}
}

/* The claim of a --once run: answered only while the round has no
 * outcome, the same again to a resend. */
inline claim()
{
	atomic {
		if
#ifndef MUT_CLAIM_NO_CHECK
		:: out[g] != NONE -> hres = out[g]
#endif
		:: else ->
			assert(runner[g] == p + 1);
			/* once: the command never starts in a round with an outcome */
			assert(out[g] == NONE);
			claimed[g] = 1;
			hres = NONE
		fi
	}
}

/* release-3.lua: pass the round after the command exited 0. */
inline release()
{
	atomic {
		if
		:: out[g] != NONE ->
#ifndef MUT_RELEASE_NO_CHECK
			res = out[g]
#else
			res = OK        /* RPUSH after the outcome: the head stays */
#endif
		:: else ->
			assert(runner[g] == p + 1);
			push(g, OK);
			res = OK
		fi
	}
}

inline crash_point()
{
	if
	:: CRASH -> goto dead
	:: true
	fi
}

proctype Party(byte p)
{
	byte g, kind, hres, res, q, c, sl, cs;
	bit isonce = (ONCE >> p) & 1;

	c = 1;
	do
	:: c > CALLS -> break
	:: c <= CALLS ->
		cur[p] = c;
		rec[p] = 0;
		sl = 0;
		cs = 0;
#ifdef EARLY_CRASH
		crash_point();
#endif
arr:
		arrive();
		if
		:: TAKE(losses) ->              /* the script ran; its reply is lost */
			if
			:: goto arr            /* resend, same nonce */
			:: TAKE(signals) ->    /* the call failed for good */
				withdraw();
				goto over
			fi
		:: true
		fi;
		if
		:: kind == DONE -> res = OK
		:: kind == WAIT ->
			do
			:: out[g] != NONE -> res = out[g]; break  /* BLMOVE */
			:: SLICE -> heartbeat();                  /* a slice ran out */
				if
				:: hres != NONE -> res = hres; break
				:: else
				fi
			:: TIMED_OUT -> abandon(); break          /* own --timeout */
			:: TAKE(signals) -> abandon(); break      /* a signal */
			:: CRASH -> goto dead
			od
		:: kind == RUN ->
			crash_point();
clm:
			claim();
			if
			:: TAKE(losses) -> goto clm
			:: true
			fi;
			if
			:: hres != NONE -> res = hres; goto over
			:: else
			fi;
			assert(claimed[g] && !cmd_started[g]);  /* at most once */
			cmd_started[g] = 1;
			do
			:: cmd_ok[g] = 1;           /* the command exited 0 */
rel:
				release();
				if
				:: TAKE(losses) -> goto rel
				:: true
				fi;
				break
			:: TAKE(fails) ->   /* the command failed */
				abandon();
				break
			:: atomic { cs < CMD_SLICES -> cs++ } ->
				heartbeat();             /* while it runs */
				if
				:: hres != NONE ->  /* broken meanwhile: stop it */
					res = hres; break
				:: else
				fi
			:: TIMED_OUT -> abandon(); break
			:: TAKE(signals) -> abandon(); break
			:: CRASH -> goto dead
			od
		fi;
over:
		atomic {
			fin[p] = res;
			fgen[p] = g;
			/* agreement: the party's result is its round's outcome */
			if
			:: res == OK || res == BRK -> assert(out[g] == res)
			:: res == GAVEUP -> assert(out[g] != OK)
			:: else
			fi
		}
		if
		:: res == UNK -> break
		:: else
		fi;
		c++
	od;
	ended++;
	goto stop;
dead:
	/* a dead party's command dies with it (its group is killed) */
	ended++;
stop:
	skip
}

/* The environment: a live party stalls past its lease (its deadline
 * passes while it is alive), and an operator runs reset. */
proctype Env()
{
	byte r, q, p;
	do
	:: stalls > 0 ->
		atomic {
			stalls--;
			select(p : 0 .. N - 1);
			if
			:: EXPIRE(p)
			:: dlx = 1  /* dl passes, its member having renewed since */
			fi
		}
	:: resets > 0 ->
		atomic {
			resets--;
			for (r : 1 .. NR - 1) {
				if
				:: in[r] != 0 && out[r] == NONE -> reset_hit[r] = 1
				:: else
				fi
			}
			/* reset-2.lua: break every round that has members and no
			 * outcome: the open one, and one whose --once runs */
			for (r : 1 .. NR - 1) {
				if
#ifdef MUT_RESET_ONCE
				:: r == gen && in[r] != 0 && out[r] == NONE -> brk(r)
#else
				:: in[r] != 0 && out[r] == NONE -> brk(r)
#endif
				:: else
				fi
			}
		}
	:: else -> break
	od
}

init
{
	byte i;
	atomic {
		for (i : 0 .. N - 1) {
			run Party(i)
		}
		run Env()
	}
}

#ifdef TERM
/* termination: every party ends (passes, breaks, times out or dies) */
ltl term { <> (ended == N) }
#endif
