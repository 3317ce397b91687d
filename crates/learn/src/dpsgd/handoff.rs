//! A bounded queue from one producer thread to one consumer that wakes a sleeping side only in
//! batches: the consumer wakes the producer when the queue has drained to half its capacity
//! (not after every item), and the producer wakes the consumer only if it is waiting. With
//! `std::sync::mpsc::sync_channel`, a full queue puts the producer to sleep and wakes it again
//! for every item taken: two thread switches (and their system calls) per DP-SGD step, which at
//! expected batch 256 cost as much as a third of a step's work.
//!
//! Used items' buffers travel back to the producer through the same lock ([`Handoff::recycle`]).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

struct State<T, B> {
    items: VecDeque<T>,
    spare: Vec<B>,
    producer_asleep: bool,
    consumer_asleep: bool,
    /// The producer has finished (or panicked): no more items will come.
    producer_gone: bool,
    /// The consumer has stopped (an error, or done): the producer should stop.
    consumer_gone: bool,
}

/// The queue; `T` the items, `B` buffers handed back for reuse.
pub(crate) struct Handoff<T, B> {
    capacity: usize,
    state: Mutex<State<T, B>>,
    /// Signalled when an item arrives or the producer leaves.
    arrived: Condvar,
    /// Signalled when the queue has room again or the consumer leaves.
    drained: Condvar,
}

impl<T, B> Handoff<T, B> {
    /// A queue holding at most `capacity ≥ 2` items.
    pub fn new(capacity: usize) -> Self {
        assert!(capacity >= 2, "a queue of at least two items");
        Handoff {
            capacity,
            state: Mutex::new(State {
                items: VecDeque::with_capacity(capacity),
                spare: Vec::new(),
                producer_asleep: false,
                consumer_asleep: false,
                producer_gone: false,
                consumer_gone: false,
            }),
            arrived: Condvar::new(),
            drained: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<T, B>> {
        // A panic while holding the lock leaves consistent state (every update is one field).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Producer: queues `item`, waiting while the queue is full; `false` (item dropped) once the
    /// consumer has stopped.
    pub fn send(&self, item: T) -> bool {
        let mut s = self.lock();
        while s.items.len() >= self.capacity && !s.consumer_gone {
            s.producer_asleep = true;
            s = self.drained.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.consumer_gone {
            return false;
        }
        s.items.push_back(item);
        if s.consumer_asleep {
            s.consumer_asleep = false;
            self.arrived.notify_one();
        }
        true
    }

    /// Producer: a buffer the consumer has handed back, if any.
    pub fn spare(&self) -> Option<B> {
        self.lock().spare.pop()
    }

    /// Producer: no more items (call on every exit, including unwinding: [`ProducerGuard`]).
    fn producer_leaves(&self) {
        let mut s = self.lock();
        s.producer_gone = true;
        if s.consumer_asleep {
            s.consumer_asleep = false;
            self.arrived.notify_one();
        }
    }

    /// Consumer: the next item, waiting for it; `None` when the producer has left without
    /// sending one.
    pub fn recv(&self) -> Option<T> {
        let mut s = self.lock();
        loop {
            if let Some(item) = s.items.pop_front() {
                if s.producer_asleep && s.items.len() <= self.capacity / 2 {
                    s.producer_asleep = false;
                    self.drained.notify_one();
                }
                return Some(item);
            }
            if s.producer_gone {
                return None;
            }
            s.consumer_asleep = true;
            s = self.arrived.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Consumer: hands a used buffer back to the producer.
    pub fn recycle(&self, buffer: B) {
        self.lock().spare.push(buffer);
    }

    /// Consumer: stops the producer (its next or current [`Handoff::send`] returns `false`).
    pub fn close(&self) {
        let mut s = self.lock();
        s.consumer_gone = true;
        s.items.clear();
        self.drained.notify_one();
    }

    /// A guard for the producer's side: tells the consumer when the producer leaves, however it
    /// leaves.
    pub fn producer(&self) -> ProducerGuard<'_, T, B> {
        ProducerGuard(self)
    }
}

/// Marks the producer gone when dropped (see [`Handoff::producer`]).
pub(crate) struct ProducerGuard<'h, T, B>(&'h Handoff<T, B>);

impl<T, B> std::ops::Deref for ProducerGuard<'_, T, B> {
    type Target = Handoff<T, B>;
    fn deref(&self) -> &Handoff<T, B> {
        self.0
    }
}

impl<T, B> Drop for ProducerGuard<'_, T, B> {
    fn drop(&mut self) {
        self.0.producer_leaves();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_arrive_in_order_and_a_finished_producer_ends_the_stream() {
        let q = Handoff::<u64, Vec<u8>>::new(4);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let p = q.producer();
                for i in 0..1_000 {
                    assert!(p.send(i));
                }
            });
            for i in 0..1_000 {
                assert_eq!(q.recv(), Some(i));
                q.recycle(Vec::new());
            }
            assert_eq!(q.recv(), None);
        });
    }

    #[test]
    fn a_closed_queue_stops_a_producer_waiting_for_room() {
        let q = Handoff::<u64, ()>::new(2);
        std::thread::scope(|scope| {
            let producer = scope.spawn(|| {
                let p = q.producer();
                (0..).take_while(|&i| p.send(i)).count()
            });
            assert_eq!(q.recv(), Some(0));
            q.close();
            // It sent at most the item taken, the two the queue holds and one more after room
            // appeared, and then stopped instead of waiting for ever.
            assert!(producer.join().unwrap() <= 4);
        });
    }

    #[test]
    fn a_panicking_producer_does_not_leave_the_consumer_waiting() {
        let q = Handoff::<u64, ()>::new(2);
        std::thread::scope(|scope| {
            let producer = scope.spawn(|| {
                let p = q.producer();
                p.send(7);
                panic!("producer fails");
            });
            assert_eq!(q.recv(), Some(7));
            assert_eq!(q.recv(), None);
            assert!(producer.join().is_err());
        });
    }
}
