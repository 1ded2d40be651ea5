/// Stops the program with `message` when `condition` is false: the engine's channel for programmer errors
/// (mismatched shapes between ops, an axis out of range).
///
/// This is `precondition` with one difference: its message also survives `-O` builds. Swift's `precondition`
/// drops the message in release builds, and a user who feeds a `[1, 575]` input to a `[128, 576]` layer in a
/// release binary deserves to see both shapes, not "precondition failure".
@inlinable
@inline(__always)
public func shapePrecondition(
    _ condition: @autoclosure () -> Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition() {
        fatalError(message(), file: file, line: line)
    }
}

/// Formats a shape the way every engine message prints it: `[2, 3, 4]`.
@inlinable
public func describeShape(_ shape: [Int]) -> String {
    "[" + shape.map(String.init).joined(separator: ", ") + "]"
}

/// The number of elements of a tensor of `shape` (1 for a scalar shape `[]`).
@inlinable
public func elementCount(_ shape: [Int]) -> Int {
    shape.reduce(1, *)
}

/// The number of elements of `shape` when it is safe to compute with, else `nil`: for a shape read from a file.
/// Every size must be non-negative, and the sizes — each counted as at least 1 — must multiply to at most `limit`
/// without overflowing. So no product of a subset of its sizes can overflow either, and an empty axis does not make
/// `[0, 2^31, 2^31, 2^31]` safe.
public func checkedElementCount(_ shape: [Int], limit: Int = .max) -> Int? {
    var bound = 1, count = 1
    for size in shape {
        guard size >= 0 else { return nil }
        let (next, overflow) = bound.multipliedReportingOverflow(by: max(size, 1))
        guard !overflow, next <= limit else { return nil }
        bound = next
        count = size == 0 ? 0 : count * size
    }
    return count
}

/// Resolves a possibly negative axis (`-1` = last) against `rank`, stopping with a message when out of range.
@inlinable
public func normalizedAxis(_ axis: Int, rank: Int, file: StaticString = #fileID, line: UInt = #line) -> Int {
    let resolved = axis < 0 ? axis + rank : axis
    shapePrecondition(
        resolved >= 0 && resolved < rank,
        "axis \(axis) is out of range for a tensor of rank \(rank)", file: file, line: line)
    return resolved
}
