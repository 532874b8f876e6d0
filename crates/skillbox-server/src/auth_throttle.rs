//! Wrong tokens: how often one client may present one, across its connections and every door
//! behind the token (`/rpc`, `/mcp`, `/metrics`, `/healthz`, the web app's `/login` and bearer
//! headers), with a log line and a counter for them.
//!
//! Each client address has a bucket of [`FAILED_AUTH_BURST`] wrong tokens, refilled by one
//! every [`FAILED_AUTH_REFILL`] (`governor`'s keyed GCRA: one instant per address, no timers).
//! Once an address's bucket is empty, a token from that address is not compared at all until
//! the next one is due: the request gets 429 with `Retry-After`, whether the token was right or
//! not. Comparing it anyway and letting a right one through would let a guesser keep guessing
//! at full speed and read the answer to the one right guess; so a client on the same address as
//! a guesser waits too, for as long as the guessing goes on and at most one refill after it
//! stops. Web sessions are not tokens and are never held back. Before this, 5,854 guesses in
//! 3 s from four connections went through unnoticed.
//!
//! Addresses are grouped where one party holds many: every loopback address is one client
//! (any local program can bind all of 127.0.0.0/8), and an IPv6 address counts by its /64.
//! The table holds at most [`MAX_TRACKED_CLIENTS`] addresses; past it, new ones share one more
//! bucket.
//! `X-Forwarded-For` is not read (any client can write it): behind a reverse proxy every
//! client has the proxy's address.

use std::collections::HashMap;
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::Extensions;
use governor::clock::{Clock, MonotonicClock, Reference};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;

use crate::metrics::RequestDoor;

/// Wrong tokens one client address may present in a row before it is held back.
pub const FAILED_AUTH_BURST: u32 = 10;
/// Time for one more wrong token to be allowed: past the burst, an address may have one token
/// compared per this long (so at most about 86,000 guesses a day).
pub const FAILED_AUTH_REFILL: Duration = Duration::from_secs(1);
/// At most one log line per address per this long, with the count of wrong and held-back
/// tokens since its last one (the first is logged at once).
pub const FAILED_AUTH_LOG_INTERVAL: Duration = Duration::from_secs(60);
/// Client addresses remembered at once; past this, new ones share one bucket (so the table's
/// memory is bounded however many addresses an attacker has).
pub const MAX_TRACKED_CLIENTS: usize = 4096;

/// Who a bucket belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum ClientKey {
    /// Any loopback address: every local program.
    Loopback,
    /// One IPv4 address.
    V4([u8; 4]),
    /// The first 64 bits of an IPv6 address (a site's usual allocation).
    V6([u8; 8]),
    /// A request whose connection's address is not known (served without a socket).
    Unknown,
    /// Every new address once [`MAX_TRACKED_CLIENTS`] are remembered.
    Overflow,
}

impl ClientKey {
    fn of(address: Option<IpAddr>) -> Self {
        let Some(address) = address else {
            return ClientKey::Unknown;
        };
        let address = address.to_canonical();
        if address.is_loopback() {
            return ClientKey::Loopback;
        }
        match address {
            IpAddr::V4(address) => ClientKey::V4(address.octets()),
            IpAddr::V6(address) => {
                let mut prefix = [0; 8];
                prefix.copy_from_slice(&address.octets()[..8]);
                ClientKey::V6(prefix)
            }
        }
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientKey::Loopback => formatter.write_str("loopback"),
            ClientKey::V4(octets) => write!(formatter, "{}", std::net::Ipv4Addr::from(*octets)),
            ClientKey::V6(prefix) => {
                let mut octets = [0; 16];
                octets[..8].copy_from_slice(prefix);
                write!(formatter, "{}/64", std::net::Ipv6Addr::from(octets))
            }
            ClientKey::Unknown => formatter.write_str("unknown address"),
            ClientKey::Overflow => formatter.write_str("addresses past the tracked ones"),
        }
    }
}

/// The address of the connection a request came on, as the server put it in the request's
/// extensions (`None` when served without a socket).
pub(crate) fn client_address(extensions: &Extensions) -> Option<IpAddr> {
    extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(address)| address.ip())
}

/// What a check of a presented token found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TokenVerdict {
    Right,
    Wrong,
    /// Not compared: the address is held back for this long.
    Throttled(Duration),
}

/// What is known of one address beyond its bucket: until when it is held back, and what is
/// still to be logged about it.
#[derive(Debug)]
struct ClientRecord<I> {
    /// Tokens from the address are not compared before this (its bucket is empty).
    held_until: Option<I>,
    /// The last wrong token: a record whose bucket has had time to fill again may be dropped.
    last_wrong: I,
    wrong_unlogged: u64,
    throttled_unlogged: u64,
    logged_at: Option<I>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub(crate) struct FailedAuthLabels {
    door: &'static str,
    outcome: &'static str,
}

/// The counter of `/metrics` for wrong and held-back tokens, by door and outcome.
pub(crate) type FailedAuthCounter = Family<FailedAuthLabels, Counter>;

/// Each address's bucket of wrong tokens.
type Buckets<C> =
    RateLimiter<ClientKey, HashMapStateStore<ClientKey>, C, StateInformationMiddleware>;

/// The buckets of every client address, and the counter of what they refused.
pub(crate) struct AuthThrottle<C: Clock = MonotonicClock> {
    buckets: Buckets<C>,
    clock: C,
    clients: Mutex<HashMap<ClientKey, ClientRecord<C::Instant>>>,
    counter: FailedAuthCounter,
    burst: u32,
    refill: Duration,
}

impl<C: Clock> fmt::Debug for AuthThrottle<C> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("AuthThrottle")
            .field("burst", &self.burst)
            .field("refill", &self.refill)
            .finish_non_exhaustive()
    }
}

impl AuthThrottle {
    /// Buckets of [`FAILED_AUTH_BURST`] refilled every [`FAILED_AUTH_REFILL`], counted in
    /// `counter`.
    pub(crate) fn new(counter: FailedAuthCounter) -> Self {
        AuthThrottle::with_clock(counter, MonotonicClock)
    }
}

impl<C: Clock + Clone> AuthThrottle<C> {
    /// The same, reading the time from `clock`.
    fn with_clock(counter: FailedAuthCounter, clock: C) -> Self {
        let burst = NonZeroU32::new(FAILED_AUTH_BURST).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(FAILED_AUTH_REFILL)
            .unwrap_or_else(|| Quota::per_second(NonZeroU32::MIN))
            .allow_burst(burst);
        AuthThrottle {
            buckets: Buckets::new(quota, HashMapStateStore::default(), clock.clone()),
            clock,
            clients: Mutex::default(),
            counter,
            burst: FAILED_AUTH_BURST,
            refill: FAILED_AUTH_REFILL,
        }
    }
}

impl<C: Clock> AuthThrottle<C> {
    /// The counter of what this throttle refused, for `/metrics` to show.
    pub(crate) fn counter(&self) -> &FailedAuthCounter {
        &self.counter
    }

    /// Compare a token presented through `door` from `address` with `matches`, unless the
    /// address is held back. The check, the comparison and the count are one step under one
    /// lock, so no number of requests at once can slip more guesses through than the bucket
    /// holds.
    pub(crate) fn check(
        &self,
        address: Option<IpAddr>,
        door: RequestDoor,
        matches: impl FnOnce() -> bool,
    ) -> TokenVerdict {
        self.check_key(ClientKey::of(address), door, matches)
    }

    fn check_key(
        &self,
        key: ClientKey,
        door: RequestDoor,
        matches: impl FnOnce() -> bool,
    ) -> TokenVerdict {
        let Ok(mut clients) = self.clients.lock() else {
            // A poisoned table holds nobody back; the comparison still decides.
            return if matches() {
                TokenVerdict::Right
            } else {
                TokenVerdict::Wrong
            };
        };
        let now = self.clock.now();
        if let Some(record) = clients.get_mut(&key)
            && let Some(held_until) = record.held_until
            && held_until > now
        {
            record.throttled_unlogged += 1;
            self.count(door, "throttled");
            log_if_due(key, record, door, now);
            return TokenVerdict::Throttled(held_until.duration_since(now).into());
        }
        if matches() {
            return TokenVerdict::Right;
        }
        self.count(door, "wrong");
        let key = if clients.contains_key(&key) || self.make_room(&mut clients, now) {
            key
        } else {
            ClientKey::Overflow
        };
        let record = clients.entry(key).or_insert(ClientRecord {
            held_until: None,
            last_wrong: now,
            wrong_unlogged: 0,
            throttled_unlogged: 0,
            logged_at: None,
        });
        record.last_wrong = now;
        record.wrong_unlogged += 1;
        // The wrong token takes one from the bucket; the last one holds the address back
        // until the next is due (one refill from now).
        record.held_until = match self.buckets.check_key(&key) {
            Ok(state) if state.remaining_burst_capacity() == 0 => Some(now + self.refill.into()),
            Ok(_) => None,
            Err(not_until) => Some(not_until.earliest_possible()),
        };
        log_if_due(key, record, door, now);
        TokenVerdict::Wrong
    }

    fn count(&self, door: RequestDoor, outcome: &'static str) {
        self.counter
            .get_or_create(&FailedAuthLabels {
                door: door.label(),
                outcome,
            })
            .inc();
    }

    /// Whether the table has room for one more address, after forgetting those whose buckets
    /// are full again (logging what was still unlogged about them).
    fn make_room(
        &self,
        clients: &mut HashMap<ClientKey, ClientRecord<C::Instant>>,
        now: C::Instant,
    ) -> bool {
        if clients.len() < MAX_TRACKED_CLIENTS {
            return true;
        }
        let refilled = self.refill * self.burst;
        clients.retain(|key, record| {
            let keep = Duration::from(now.duration_since(record.last_wrong)) < refilled;
            if !keep && record.wrong_unlogged + record.throttled_unlogged > 0 {
                log_counts(*key, record, None);
            }
            keep
        });
        self.buckets.retain_recent();
        clients.len() < MAX_TRACKED_CLIENTS
    }
}

/// One warn line about `key` if none was written in the last [`FAILED_AUTH_LOG_INTERVAL`].
fn log_if_due<I: Reference>(
    key: ClientKey,
    record: &mut ClientRecord<I>,
    door: RequestDoor,
    now: I,
) {
    let due = record.logged_at.is_none_or(|logged| {
        Duration::from(now.duration_since(logged)) >= FAILED_AUTH_LOG_INTERVAL
    });
    if due {
        log_counts(key, record, Some(door));
        record.logged_at = Some(now);
    }
}

fn log_counts<I>(key: ClientKey, record: &mut ClientRecord<I>, door: Option<RequestDoor>) {
    tracing::warn!(
        client = %key,
        door = %door.map_or("any", RequestDoor::label),
        wrong = record.wrong_unlogged,
        held_back = record.throttled_unlogged,
        "wrong tokens presented (counts since the last line about this client; at most one line a minute); past {FAILED_AUTH_BURST} in a row, a client gets 429 until its next try is due"
    );
    record.wrong_unlogged = 0;
    record.throttled_unlogged = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use governor::clock::FakeRelativeClock;

    fn throttle() -> (AuthThrottle<FakeRelativeClock>, FakeRelativeClock) {
        let clock = FakeRelativeClock::default();
        (
            AuthThrottle::with_clock(FailedAuthCounter::default(), clock.clone()),
            clock,
        )
    }

    #[test]
    fn past_the_burst_an_address_gets_one_comparison_per_refill() {
        let (throttle, clock) = throttle();
        let address = ClientKey::V4([192, 0, 2, 7]);
        let check = |matches: bool| throttle.check_key(address, RequestDoor::Rpc, || matches);
        for _ in 0..FAILED_AUTH_BURST {
            assert_eq!(check(false), TokenVerdict::Wrong);
        }
        // Held back now, the right token too: it is not even compared.
        let compared = std::cell::Cell::new(false);
        let verdict = throttle.check_key(address, RequestDoor::Mcp, || {
            compared.set(true);
            true
        });
        assert_eq!(verdict, TokenVerdict::Throttled(FAILED_AUTH_REFILL));
        assert!(!compared.get());
        // Held-back tries do not push the wait further.
        clock.advance(Duration::from_millis(500));
        for _ in 0..100 {
            assert!(matches!(check(false), TokenVerdict::Throttled(_)));
        }
        assert_eq!(
            check(false),
            TokenVerdict::Throttled(Duration::from_millis(500))
        );
        // One refill later, one comparison; the right token goes through.
        clock.advance(Duration::from_millis(500));
        assert_eq!(check(true), TokenVerdict::Right);
        assert_eq!(check(false), TokenVerdict::Wrong);
        assert_eq!(check(true), TokenVerdict::Throttled(FAILED_AUTH_REFILL));
        // Another address is not held back by this one's guesses.
        assert_eq!(
            throttle.check_key(ClientKey::V4([192, 0, 2, 8]), RequestDoor::Rpc, || true),
            TokenVerdict::Right
        );
        let count = |door: &'static str, outcome: &'static str| {
            throttle
                .counter
                .get_or_create(&FailedAuthLabels { door, outcome })
                .get()
        };
        assert_eq!(count("rpc", "wrong"), u64::from(FAILED_AUTH_BURST) + 1);
        assert_eq!(count("rpc", "throttled"), 102);
        assert_eq!(count("mcp", "throttled"), 1);
    }

    #[test]
    fn addresses_one_party_holds_many_of_count_as_one() {
        let key = |address: &str| ClientKey::of(Some(address.parse().unwrap()));
        assert_eq!(key("127.0.0.1"), ClientKey::Loopback);
        assert_eq!(key("127.45.3.9"), ClientKey::Loopback);
        assert_eq!(key("::1"), ClientKey::Loopback);
        assert_eq!(key("::ffff:127.0.0.1"), ClientKey::Loopback);
        assert_eq!(key("::ffff:192.0.2.1"), key("192.0.2.1"));
        assert_eq!(key("2001:db8:1:2::1"), key("2001:db8:1:2:ffff::9"));
        assert_ne!(key("2001:db8:1:2::1"), key("2001:db8:1:3::1"));
        assert_ne!(key("192.0.2.1"), key("192.0.2.2"));
        assert_eq!(ClientKey::of(None), ClientKey::Unknown);
        assert_eq!(key("2001:db8:1:2::1").to_string(), "2001:db8:1:2::/64");
    }

    #[test]
    fn the_table_is_bounded_and_new_addresses_past_it_share_a_bucket() {
        let (throttle, clock) = throttle();
        let addresses = (0..MAX_TRACKED_CLIENTS + 20).map(|index| {
            let index = u32::try_from(index).unwrap();
            ClientKey::V4((0x0a00_0000 + index).to_be_bytes())
        });
        for address in addresses {
            throttle.check_key(address, RequestDoor::Rpc, || false);
        }
        // The addresses it holds, and the one record the rest share: their twenty wrong tokens
        // (the first logged at once) emptied its bucket.
        let clients = throttle.clients.lock().unwrap();
        assert_eq!(clients.len(), MAX_TRACKED_CLIENTS + 1);
        let overflow = &clients[&ClientKey::Overflow];
        assert_eq!(overflow.wrong_unlogged, 19);
        assert!(overflow.held_until.is_some());
        drop(clients);
        // Once their buckets are full again, the old addresses make room.
        clock.advance(FAILED_AUTH_REFILL * (FAILED_AUTH_BURST + 1));
        throttle.check_key(ClientKey::V4([192, 0, 2, 1]), RequestDoor::Rpc, || false);
        let clients = throttle.clients.lock().unwrap();
        assert!(clients.contains_key(&ClientKey::V4([192, 0, 2, 1])));
        assert!(clients.len() < 10, "{}", clients.len());
    }
}
