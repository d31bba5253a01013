/*
 * The keeper's first use (lua/includes/keeper.lua keeper_check, and the
 * client's part, rb_keeper__answer in lib/rb_keeper.c): how a request
 * tells a slot whose state was lost from a fresh one, step by step, with
 * several clients meeting one keeper at once and Redis losing it at any
 * moment.
 *
 * A request's first call reads the keeper hash. Each of these is a call of
 * its own, so other clients and a loss interleave between them:
 *   - the hash records the request's lease class: go on (grant);
 *   - the hash is gone ('missing'): look at the script cache for the class
 *     marker (found), then call again with the look; the script makes the
 *     hash from it: with the class marked, lost state and a quarantine
 *     (the class recorded, its marker being there); without, an empty
 *     hash that records no class;
 *   - the hash stands without the class ('class'): load the marker, then
 *     call again (no look: if the hash is gone by then, 'missing' again).
 * A loss (FLUSHALL) takes the hash, never the marker (the script cache).
 *
 * One lease class, so one marker. Ghosts: exposed, a grant was made under
 * the hash (a holder may run with a lease it recorded); owed, a hash under
 * which grants were made was lost and no quarantine is recorded since;
 * blind, the hash was made from a look that a loss overtook (the look
 * before the loss, its call after): the one window the design leaves open
 * (doc/LOCKS.md "State loss": a FLUSHALL between a request's look and its
 * next call, one round trip), so a grant under such a hash is not held to
 * the quarantine.
 *
 * What is checked:
 *   - the hash records the class only with its marker in the cache (so
 *     its loss is seen);
 *   - no grant while a quarantine is owed (a lost holder may still run),
 *     but under a blind hash;
 *   - no quarantine without a loss: clients meeting a new keeper at once
 *     never take one another's first use for lost state.
 *
 * Seeded bugs: MUT_KEEPER_MARK_FIRST (the order before this model: the
 * marker loaded right after the look, before the hash stands; a crowd's
 * member that looks then sees it and quarantines the slot for nothing),
 * MUT_KEEPER_NO_MARKER (the class recorded without its marker loaded),
 * MUT_KEEPER_STALE_LOOK (a look made before the hash went is trusted
 * after it went).
 */

#ifndef C
#define C 3          /* clients, each one request */
#endif
#ifndef LOSSES
#define LOSSES 2
#endif

byte keeper = 0;     /* 0: no hash; 1: a hash without the class; 2: with */
bit marker = 0;      /* the class marker is in the script cache */
bit quar = 0;        /* the hash records a quarantine */
bit exposed = 0;     /* a grant was made under a hash */
bit owed = 0;        /* such a hash was lost, no quarantine since */
bit lossy = 0;       /* a loss happened */
bit blind = 0;       /* the hash was made from a look a loss overtook */
byte inwin = 0;      /* the clients between their look and its call */
byte stale = 0;      /* ... when a loss came */
byte done = 0;

#define B(c) (1 << (c))

inline quarantine()
{
	assert(lossy);   /* no quarantine without a loss */
	quar = 1;
	owed = 0
}

inline grant()
{
	assert(keeper == 2 && marker);
	/* a grant waits out a recorded quarantine; none may be owed */
	assert(!owed || blind);
	exposed = 1
}

proctype Client(byte id)
{
	bit found, looked;

missing:
	atomic {
		if
		:: keeper == 2 -> grant(); goto end
		:: keeper == 1 -> goto class
		:: keeper == 0 -> looked = 0
		fi
	}
	/* the hash is gone: look */
	atomic { found = marker; inwin = inwin | B(id); stale = stale & ~B(id) }
	looked = 1;
#ifdef MUT_KEEPER_MARK_FIRST
	marker = 1;
	atomic {
		if
		:: keeper == 0 ->
			if
			:: found -> quarantine()
			:: else
			fi;
			keeper = 2
		:: else -> keeper = 2
		fi;
		grant();
		goto end
	}
#endif
	atomic {        /* the call with the look: the hash from it */
		inwin = inwin & ~B(id);
		if
		:: keeper == 0 ->
			if
			:: found -> quarantine(); keeper = 2
			:: else -> keeper = 1
			fi;
			blind = (stale & B(id)) != 0
		:: else
		fi;
		if
		:: keeper == 2 -> grant(); goto end
		:: else
		fi
	}
class:
#ifndef MUT_KEEPER_NO_MARKER
	marker = 1;     /* the class marker, once the hash stands */
#endif
	atomic {
		if
		:: keeper == 0 ->
#ifdef MUT_KEEPER_STALE_LOOK
			if
			:: looked && found -> quarantine(); keeper = 2; grant(); goto end
			:: looked && !found -> keeper = 2; grant(); goto end
			:: else -> goto missing
			fi
#else
			goto missing
#endif
		:: else -> keeper = 2; grant(); goto end
		fi
	}
end:
	done++
}

/* Redis loses everything (FLUSHALL, FLUSHDB, an allkeys eviction): the
 * hash, never the script cache. */
proctype Loss()
{
	byte left = LOSSES;

	do
	:: left > 0 && keeper != 0 ->
		atomic {
			if
			:: exposed -> owed = 1
			:: else
			fi;
			keeper = 0;
			quar = 0;
			blind = 0;
			stale = stale | inwin;
			lossy = 1;
			left--
		}
	:: done == C -> break
	:: left == 0 -> break
	od
}

init
{
	byte i;

	atomic {
		for (i : 1 .. C) {
			run Client(i - 1)
		}
		run Loss()
	}
}
