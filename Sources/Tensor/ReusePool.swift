import Synchronization

/// Objects kept for reuse by any number of concurrent callers: each call borrows one (or makes one when none is
/// waiting) and gives it back, so after the first call on each thread nothing is allocated. Up to `limit` are
/// kept; more concurrent callers than that make their own and drop them.
///
/// An item is held by one caller at a time, which is what makes the pool safe to share although the items are
/// not `Sendable` (workspaces and scratch buffers): the pool hands an item to one thread only, and takes it back
/// before another can have it.
package final class ReusePool<Item: AnyObject>: @unchecked Sendable {
    /// Items waiting for the next call, as `AnyObject`s: a storage type that is the same for every `Item`, so that
    /// a call instantiates no generic type at run time.
    @usableFromInline let spare: Mutex<[Waiting]>
    /// Items kept at most.
    @usableFromInline package let limit: Int

    /// An item on its way between the pool and its one caller (see the type's description for why that is safe).
    @usableFromInline struct Waiting: @unchecked Sendable {
        @usableFromInline let object: AnyObject
        @usableFromInline init(_ object: AnyObject) { self.object = object }
    }

    /// An empty pool that keeps up to `limit` items.
    package init(limit: Int = 64) {
        precondition(limit >= 0, "ReusePool: limit \(limit) must be ≥ 0")
        self.limit = limit
        var items: [Waiting] = []
        items.reserveCapacity(limit)
        spare = Mutex(items)
    }

    /// Runs `body` with an item of its own: one waiting in the pool, or `make()`'s.
    @inlinable
    package func with<R, E: Error>(make: @autoclosure () -> Item, _ body: (Item) throws(E) -> R) throws(E) -> R {
        let item = spare.withLock { $0.popLast() }.map { unsafeDowncast($0.object, to: Item.self) } ?? make()
        defer {
            let returned = Waiting(item)
            spare.withLock { if $0.count < limit { $0.append(returned) } }
        }
        return try body(item)
    }
}
