/*
 * The job protocol of rbarrier (DESIGN.md "Jobs": `rbarrier run`), as the
 * design specifies it (not implemented yet): M runners meet (the entering
 * round), each runs CMD while it holds a membership lease, CMD meets the
 * others at a barrier X bound to the job (rb:b:{JOB}:X), then all leave
 * together (the leaving round). A member that fails breaks the job; with
 * --restarts K the survivors meet again in the next attempt. Each script is
 * one atomic step; a member (runner + its CMD) is one process.
 * doc/PROTOCOL.md maps each step to the design text.
 * History events are not modelled: they decide nothing (each script's
 * append to the name's history, lua/includes/history.lua, is read by no
 * script).
 *
 *   M        members (2..3)             K        --restarts
 *   FAILS    CMDs that may fail          CRASHES  runners that may die
 *   SIGNALS  runners interrupted (or an entering meeting timed out)
 *   STALE    a killed CMD that still reaches X once after the break
 *   STOPS    runners signalled while CMD runs: the job stops (preemption):
 *            every CMD gets SIGTERM once, then saves (a round of X) or
 *            exits; each member departs as its CMD ends
 *   DUPS     a second runner started with member 0's id (another nonce)
 *   TERM     check termination (pan -a -f), with JOB_LATE_CRASH
 *   LOSSES   the job's state lost once it runs (FLUSHALL, or its keys
 *            evicted), and a new run of the name started at once: its
 *            member 0 (Rerun) must not run CMD while the old one may
 *   RERUNS   a new run of the name started as soon as the job broke for
 *            good or stopped: the same, while the old members stop
 * Seeded bugs: MUT_JOB_BREAK_NO_X (the break does not reach the job's
 *   barrier), MUT_X_NO_JOB_CHECK (a job's barrier does not check the
 *   attempt), MUT_JOB_HB_NO_LEASE (a runner's heartbeat does not look at
 *   the other members' leases: caught by termination), MUT_JOB_OVER_OPEN
 *   (the last attempt's break leaves the job hash open, which the
 *   heartbeat trusts), MUT_JOB_BAR_PRUNE_OPEN (the heartbeat's prune of
 *   :bar drops the open round too), MUT_STOP_WAIT_FAILS (a wait in a
 *   stopping job fails at once, as in a broken one), MUT_STOP_RESTARTS (a
 *   stop moves the job to its next attempt and the members rerun),
 *   MUT_DUP_JOINS (a second runner with a held id joins as that member),
 *   MUT_RDV_GROUP_EARLY (the hosts are
 *   grouped by rank 0's entry, not by the one that completes the round),
 *   MUT_RDV_MASTER_KEPT (rank 0's endpoint is kept once per epoch, so a
 *   restart meets on the last attempt's port), MUT_JOB_KEEPER_NO_MARKER
 *   (the keeper is made without its marker loaded first),
 *   MUT_JOB_LOSS_NO_RECORD (a new run does not look at the keeper's
 *   record of the job's members), MUT_JOB_RERUN_NO_WAIT (a new run after
 *   a break or a stop does not wait for the record), MUT_JOB_NOTE_TRUSTED
 *   (a renewal takes the job hash's note of the record for cover without
 *   comparing its own deadline, so the record may end before its lease).
 *
 * The keeper (lua/includes/keeper.lua): a FLUSHALL takes the job and the
 * keeper but not the markers in the script cache; an eviction of the
 * job's keys leaves the keeper and its record of members whose lease
 * runs. The old members learn of the loss at their next look (a renewal,
 * a wait: the break here), stop CMD and exit 1; their leases pass after.
 * A new run's entry that finds a lost keeper with a marker there, or that
 * record, waits until every old member's lease has passed (quar, pend).
 * So does one that finds the last run broken for good or stopped: its
 * members stop CMD and renew no more, and each lease passes once its CMD
 * has stopped (the watchdog's deadline; jexp here).
 *
 * The rendezvous data (torchrun's environment) rides on the entering
 * round: each entry records its host (rdvh), rank 0's (member 0's) entry
 * its endpoint, a fresh one per attempt (rdvm: a + 1 stands for the port
 * of attempt a), and the entry that completes the round groups the hosts
 * it recorded (rdvg). A member that starts CMD reads them: its attempt's
 * endpoint, and a grouping of every member, made once.
 */

#ifndef M
#define M 2
#endif
#ifndef K
#define K 1
#endif
#ifndef FAILS
#define FAILS 1
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef SIGNALS
#define SIGNALS 0
#endif
#ifndef STALE
#define STALE 1
#endif
#ifndef STOPS
#define STOPS 0
#endif
#ifndef DUPS
#define DUPS 0
#endif
#ifndef LOSSES
#define LOSSES 0
#endif
#ifndef RERUNS
#define RERUNS 0
#endif

#define NA (K + 1)           /* attempts 0..K */
#define NX (M * NA + M + 2)  /* rounds of X */
#define ALL ((1 << M) - 1)
#define B(p) (1 << (p))
#define POP(m) (((m) & 1) + (((m) >> 1) & 1) + (((m) >> 2) & 1))
#define TAKE(x) atomic { x > 0 -> x-- }

#define NONE 0
#define OK   1
#define BRK  2
#define STOP 3               /* 'stopping <reason>' on :out */

/* ---- Redis: rb:j:{JOB} and the job's barrier rb:b:{JOB}:X ---- */
byte att;            /* the job's current attempt (RBARRIER_RESTART) */
byte ent[NA];        /* entering round of each attempt: members in */
byte left[NA];       /* leaving round: members whose CMD exited 0 */
byte jout[NA];       /* the attempt's outcome: done (OK) or broken */
byte jexp;           /* members whose membership lease has passed */
byte xg = 1;         /* X's open round */
byte xin[NX];        /* X's rounds: members */
byte xout[NX];       /* X's rounds: outcome */
int xbar[NA];        /* the attempt's :bar: X's rounds the break reaches */
bit jshut;           /* the job hash says no attempt runs (done or over) */
byte dep[NA];        /* members departed from a stopping attempt (:left) */
byte rdvh[NA];       /* :rdv h:<id>: members whose host is recorded */
byte rdvg[NA];       /* :rdv <id>: the members the grouping covered */
byte rdvn[NA];       /* how many times the attempt was grouped */
#ifndef MUT_RDV_MASTER_KEPT
byte rdvm[NA];       /* :rdv master: rank 0's endpoint */
#define MASTER(a) rdvm[a]
#else
byte rdvm1;
#define MASTER(a) rdvm1
#endif

/* ---- the keeper of the job's slot, the server's script cache ---- */
bit keeper;          /* the keeper hash is there */
bit rec;             /* its record of the job's members, still ahead */
byte recm;           /* members whose lease that record covers */
bit kr;              /* the job hash notes how far the record stands */
bit marker;          /* a marker is in the script cache (never lost) */
bit jlost;           /* the job's state was lost */
bit quar;            /* a new run waits for the old members' leases */
byte pend;           /* ghost: members whose CMD may run at the loss */

/* ---- environment ---- */
byte fails = FAILS;
byte crashes = CRASHES;
byte signals = SIGNALS;
byte stale = STALE;
byte stops = STOPS;

/* ---- ghosts ---- */
byte xma[M];         /* the attempt of each member's last X arrival */
bit failed[NA];      /* a member of the attempt failed */
byte cmdok[NA];      /* members whose CMD exited 0 in the attempt */
byte cmds[M];        /* CMDs running as each member id */

/* the job's break: one script reaches the job and its barrier's open
 * round (same hash tag), and moves the job to its next attempt */
inline jbreak(a)
{
	if
	:: jout[a] == NONE ->
		jout[a] = BRK;
#ifndef MUT_JOB_BREAK_NO_X
		/* every round in :bar without an outcome (only X's open round
		 * can be one) */
		if
		:: (xbar[a] & B(xg)) != 0 && xout[xg] == NONE -> xout[xg] = BRK; xg++
		:: else
		fi;
#endif
		/* the job hash moves on with the outcome, in the same step */
		if
		:: att == a && a < K -> att++
#ifndef MUT_JOB_OVER_OPEN
		:: att == a && a == K -> jshut = 1
#endif
		:: else
		fi
	:: else
	fi
}

/* the rounds of X that the attempt's :bar holds without an outcome break
 * (only X's open round can be one) */
inline xbreak_open(a)
{
	if
	:: (xbar[a] & B(xg)) != 0 && xout[xg] == NONE -> xout[xg] = BRK; xg++
	:: else
	fi
}

/* job-stop 'stop': the attempt stops (unless an outcome is there); the
 * hash says it no longer runs; members that left before depart now */
inline jstop(a)
{
	if
	:: jout[a] == NONE ->
		jout[a] = STOP;
#ifdef MUT_STOP_RESTARTS
		if
		:: att == a && a < K -> att++
		:: else -> jshut = 1
		fi;
#else
		jshut = 1;
#endif
		if
		:: left[a] != 0 -> dep[a] = dep[a] | left[a]; xbreak_open(a)
		:: else
		fi
	:: else
	fi
}

/* job_depart: member q leaves the stopping attempt; X's open round breaks
 * for the others at once */
inline depart(a, q)
{
	dep[a] = dep[a] | B(q);
	xbreak_open(a)
}

/* X's arrival inside the job (arrive with the job's attempt) */
inline xarrive(a)
{
	atomic {
		if
#ifndef MUT_X_NO_JOB_CHECK
		:: jout[a] == BRK || (jout[a] == STOP && dep[a] != 0) ||
		   (jout[a] != STOP && a != att) -> hres = BRK  /* fails at once */
#endif
#ifdef MUT_STOP_WAIT_FAILS
		:: jout[a] == STOP -> hres = BRK
#endif
		:: else ->
			xrd = xg;
			/* no arrival of another attempt counts in this round */
			for (q : 0 .. M - 1) {
				if
				:: xin[xrd] & B(q) -> assert(xma[q] == a)
				:: else
				fi
			}
			xma[p] = a;
			xin[xrd] = xin[xrd] | B(p);
			xbar[a] = xbar[a] | B(xrd);
			if
			:: POP(xin[xrd]) == M ->
				/* job: no barrier of a broken attempt passes */
				assert(jout[a] != BRK);
				xout[xrd] = OK;
				xg++;
				hres = OK
			:: else -> hres = NONE
			fi
		fi
	}
}

/* A renewal's hold on the keeper's record (keeper_cover): one the job
 * hash's note covers writes nothing, one it does not raises the record
 * (and the note) beyond its new lease. Either way the record covers it:
 * with no clock here, that is stated, not checked (the deadlines'
 * arithmetic is tests/integration/t_jobid.sh's); the mutant shows that a
 * renewal left uncovered is caught. */
inline cover(p)
{
#ifndef MUT_JOB_NOTE_TRUSTED
	recm = recm | B(p); kr = 1
#else
	if
	:: kr -> recm = recm & ~B(p)
	:: else -> recm = recm | B(p); kr = 1
	fi
#endif
}

/* the runner's heartbeat: renew this membership, break the job if a
 * member's lease has passed */
inline jheartbeat(a)
{
	atomic {
		if
		:: att == a && !jshut ->
			/* the job hash says the attempt runs: its :out is not
			 * read, as it holds no outcome */
			assert(jout[a] == NONE)
		:: else
		fi;
		if
		:: jout[a] == STOP ->
			/* a member whose lease passed departs; no break */
			hres = STOP;
			jexp = jexp & ~B(p);
			cover(p);
			if
			:: (ent[a] & jexp & ~dep[a]) != 0 ->
				dep[a] = dep[a] | (ent[a] & jexp); xbreak_open(a)
			:: else
			fi
		:: jout[a] == OK || jout[a] == BRK -> hres = jout[a]
		:: else ->
			/* the prune of :bar, when due: the ended rounds go */
			if
			:: ent[a] == ALL ->
#ifndef MUT_JOB_BAR_PRUNE_OPEN
				xbar[a] = xbar[a] & B(xg)
#else
				xbar[a] = 0
#endif
			:: true
			fi;
			jexp = jexp & ~B(p);
			cover(p);
#ifndef MUT_JOB_HB_NO_LEASE
			if
			:: (ent[a] & jexp) != 0 -> jbreak(a); hres = BRK
			:: else -> hres = NONE
			fi
#else
			hres = NONE
#endif
		fi
	}
}

/* JOB_LATE_CRASH: a runner dies only once its attempt's entering round
 * is full (termination assumes every runner enters the first time: the
 * first entering meeting waits as long as --timeout says, 0 = forever) */
#ifdef JOB_LATE_CRASH
#define CRASH_OK (ent[a] == ALL)
#else
#define CRASH_OK true
#endif
#define CRASH atomic { CRASH_OK && crashes > 0 -> crashes--; jexp = jexp | B(p); cmds[p] = 0 }
#ifdef MUT_STOP_RESTARTS
#define STOPGO broken
#else
#define STOPGO stopping
#endif
/* re-entering ends after 5 minutes even with --timeout 0: REENTER slices */
#ifndef REENTER
#define REENTER 2
#endif
byte ended;          /* runners that are done (or dead) */

proctype Member(byte p)
{
	byte a, hres, xrd, q, sl;

enter:
	atomic {
		/* a new runner's entry reads the keeper: the marker goes into
		 * the script cache before the keeper records its class */
		if
		:: !keeper ->
#ifndef MUT_JOB_KEEPER_NO_MARKER
			marker = 1;
#endif
			keeper = 1
		:: else
		fi;
		a = att; ent[a] = ent[a] | B(p); jexp = jexp & ~B(p); sl = 0;
		recm = recm | B(p);   /* job-enter raises the record itself */
		/* job-enter's join: the host, rank 0's endpoint, and the
		 * grouping by the entry that completes the round */
		rdvh[a] = rdvh[a] | B(p);
		if
#ifndef MUT_RDV_MASTER_KEPT
		:: p == 0 -> MASTER(a) = a + 1
#else
		:: p == 0 && MASTER(a) == 0 -> MASTER(a) = a + 1
#endif
		:: else
		fi;
		if
#ifndef MUT_RDV_GROUP_EARLY
		:: ent[a] == ALL ->
#else
		:: p == 0 ->
#endif
			rdvg[a] = rdvh[a]; rdvn[a]++
		:: else
		fi
	}
	do
	:: ent[a] == ALL -> break                 /* the entering round */
	:: jout[a] == STOP -> goto quit           /* never ran: departs */
	:: jout[a] == BRK -> goto broken
#ifdef TERM
	:: a > 0 && sl >= REENTER ->              /* re-entering timed out */
		atomic { jbreak(a) };
		if
		:: jout[a] == STOP -> goto quit
		:: else -> goto broken
		fi
	:: atomic {    /* a slice runs out only while the round is not full */
		ent[a] != ALL && (a == 0 || sl < REENTER) ->
		sl = sl + (a > 0 -> 1 : 0)
	   } ->
#else
	:: ent[a] != ALL ->
#endif
		jheartbeat(a);
		if
		:: hres == STOP -> goto quit
		:: hres != NONE && hres != STOP -> goto broken
		:: else
		fi
	:: TAKE(signals) ->                       /* fails: a stop wins */
		atomic { jbreak(a) };
		if
		:: jout[a] == STOP -> goto quit
		:: else -> goto broken
		fi
	:: CRASH -> goto dead
	od;

	/* rb_job__rdv_fetch: this member's values and rank 0's endpoint,
	 * of this attempt, grouped once over every member */
	assert(MASTER(a) == a + 1 && rdvg[a] == ALL && rdvn[a] == 1);

	/* CMD runs: it meets the others at X, then exits 0 (or fails) */
	atomic { assert(cmds[p] == 0); cmds[p]++ }
	xarrive(a);
	if
	:: hres == BRK && jout[a] == STOP -> goto STOPGO
	:: hres == BRK && jout[a] != STOP -> assert(jout[a] != NONE); goto broken
	:: hres == OK -> goto cmd_done
	:: else
	fi;
	do
	:: xout[xrd] != NONE ->                     /* X's blocking wait */
		if
		:: xout[xrd] == OK -> break
		:: xout[xrd] != OK && jout[a] == STOP -> goto STOPGO
		:: xout[xrd] != OK && jout[a] != STOP ->
			assert(jout[a] != NONE); goto broken
		fi
	:: atomic {                                /* X's heartbeat */
		xout[xrd] == NONE ->
		/* job: a waiting member learns of the break at once */
		assert(jout[a] != BRK)
	   };
		jheartbeat(a);                         /* the runner, meanwhile */
		if
		:: hres == STOP -> goto STOPGO         /* SIGTERM to CMD, once */
		:: hres != NONE && hres != STOP -> goto broken  /* stop CMD */
		:: else
		fi
	:: TAKE(fails) -> goto failing             /* CMD killed meanwhile */
	:: TAKE(stops) ->                          /* preempted */
		atomic { jstop(a) }; goto stopped
	:: CRASH -> goto dead
	od;
cmd_done:
	if
	:: TAKE(fails) -> goto failing
	:: TAKE(stops) -> atomic { jstop(a) }; goto stopped
	:: true ->                                 /* CMD exited 0: leave */
	   atomic {
		cmds[p]--;
		if
		:: jout[a] == STOP -> depart(a, p)     /* the stop came first */
		:: jout[a] == NONE ->
			cmdok[a] = cmdok[a] | B(p);
			left[a] = left[a] | B(p);
			if
			:: left[a] == ALL ->
				assert(!failed[a] && cmdok[a] == ALL);
				jout[a] = OK;
				jshut = 1
			:: else
			fi
		:: else
		fi
	   }
	fi;
	do
	:: jout[a] == OK -> goto stop              /* all left together */
	:: jout[a] == STOP -> goto stop            /* it had left: exit 3 */
	:: jout[a] == BRK -> goto broken
	:: jout[a] == NONE -> jheartbeat(a);
		if
		:: hres == OK || hres == STOP -> goto stop
		:: hres == BRK -> goto broken
		:: else
		fi
	:: CRASH -> goto dead
	od;
stopped:
	/* rb_job_stop: a break that came first wins */
	if
	:: jout[a] == STOP -> goto STOPGO
	:: else -> goto broken
	fi;
stopping:
	/* the job stops: CMD got SIGTERM once; it agrees on a step to save
	 * (a round of X, which keeps passing while every member is there) or
	 * exits; then this member departs */
	if
	:: xarrive(a);
		do
		:: hres != NONE -> break
		:: xout[xrd] != NONE -> hres = xout[xrd]; break
		:: atomic { xout[xrd] == NONE && hres == NONE } -> jheartbeat(a); hres = NONE
		:: CRASH -> goto dead
		od;
		/* the save round fails only when a member has departed */
		assert(hres == OK || dep[a] != 0)
	:: true
	fi;
	atomic { cmds[p]--; depart(a, p) };
	goto stop;
failing:
	/* job-end 'fail': a break, or a departure from a stopping job */
	atomic { failed[a] = 1; jbreak(a) };
	if
	:: jout[a] == STOP -> goto quit
	:: else -> goto broken
	fi;
quit:
	atomic { cmds[p] = 0; depart(a, p) };
	goto stop;
broken:
	if
	:: jlost ->
		/* the state is gone: CMD stops, the runner exits 1; its lease
		 * passes after */
		atomic { cmds[p] = 0; jexp = jexp | B(p) }; goto stop
	:: else
	fi;
	assert(jout[a] != STOP);                   /* a stop never restarts */
	atomic { cmds[p] = 0 };
	/* the CMD of this attempt is being killed; it may still reach X */
	if
	:: TAKE(stale) ->
		xarrive(a);
		hres = NONE
	:: true
	fi;
	if
	:: a < K -> goto enter                     /* --restarts */
	:: else -> goto stop                       /* exit 3 */
	fi;
dead:
stop:
	/* a runner that is done renews no more: its lease passes (its CMD
	 * has stopped, or it died and its watchdog ended CMD) */
	atomic { jexp = jexp | B(p); cmds[p] = 0 };
#ifdef TERM
	ended++
#else
	skip
#endif
}

#include "job_faults.pml"

init
{
	byte i;
	atomic {
		for (i : 0 .. M - 1) {
			run Member(i)
		}
#if DUPS > 0
		run Dup();
#endif
#if LOSSES > 0
		run Loss();
#endif
#if LOSSES > 0 || RERUNS > 0
		run Rerun();
#endif
	}
}

#ifdef TERM
/* termination: every runner ends (done, broken, or dead) */
ltl term { <> (ended == M) }
#endif
