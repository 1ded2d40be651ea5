import DataFiles
import Foundation
import WeightsFormat

/// How a failed attempt is handled by the retry-with-fallback chain.
public enum FailureKind: String, Sendable, Equatable {
    /// May succeed on a second try (an I/O error while reading): retried on the same link.
    case transient
    /// The model cannot run (missing, corrupt or incompatible weights): the next link at once, no retry.
    case permanent
    /// The input is wrong; no model can fix it: the chain stops at once.
    case badInput
}

/// The kind of any error a link can throw: weights-file I/O errors are transient, other weights-file errors and
/// incompatible models permanent, data errors bad input; anything else is treated as permanent.
package func failureKind(of error: any Error) -> FailureKind {
    switch error {
    case let error as WeightsFileError: error.isTransient ? .transient : .permanent
    case let error as IncompatibleModel: error.kind
    case is DataError: .badInput
    case let error as TransientFailure: error.kind
    default: .permanent
    }
}

/// A weights file that loaded but does not fit the task (wrong input, preprocessing or labels): a permanent
/// failure of its link, not bad input.
package struct IncompatibleModel: Error, CustomStringConvertible, Sendable {
    /// What does not fit.
    package let reason: DataError
    /// Always permanent.
    package var kind: FailureKind { .permanent }

    /// Wraps the classifier's complaint about a weights file.
    package init(_ reason: DataError) { self.reason = reason }

    package var description: String { reason.description }
}

/// A failure that may pass on a second try (for weights sources other than files, and for tests).
public struct TransientFailure: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public let message: String
    /// Always transient.
    public var kind: FailureKind { .transient }

    /// Creates the failure.
    public init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

/// One failed attempt: which link, why, and how it was handled.
public struct ChainAttempt: Sendable, Equatable, Encodable {
    /// The link's name (`shape-classifier.int8`, `geometric`, …).
    public let model: String
    /// The error, as one line.
    public let error: String
    /// How the failure was classified.
    public let kind: FailureKind

    enum CodingKeys: String, CodingKey { case model, error, kind }

    /// Encodes `model`, `error` and `kind`, the keys of the CLI's `attempts`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(model, forKey: .model)
        try container.encode(error, forKey: .error)
        try container.encode(kind.rawValue, forKey: .kind)
    }
}

/// Why the chain gave no answer.
public enum ChainFailure: Error, Sendable {
    /// The input is wrong (file, line, column, what was expected); no link was tried after it.
    case badInput(DataError, attempts: [ChainAttempt])
    /// Every link failed; each attempt and its cause.
    case allFailed([ChainAttempt])
}

/// One link of the chain: a name and how to get the answer.
package struct ChainLink<Answer>: Sendable {
    /// The name answers and attempts carry.
    package let name: String
    /// Produces the answer or throws an error `failureKind(of:)` can classify.
    package let run: @Sendable () throws -> Answer

    /// Creates a link.
    package init(name: String, run: @escaping @Sendable () throws -> Answer) {
        self.name = name
        self.run = run
    }
}

/// Retries and backoff: a transient failure is tried again up to `retries` times, waiting `backoff · 2^i` seconds
/// before retry `i` (0-based).
public struct RetryPolicy: Sendable {
    /// Extra tries after a transient failure, per link: 0…`maximumRetries` (a value outside is clamped).
    public var retries: Int {
        didSet { retries = min(max(0, retries), Self.maximumRetries) }
    }
    /// The first wait, in seconds: 0…`maximumBackoff` (a value outside is clamped, one not finite is 0.02).
    public var backoff: Double {
        didSet { backoff = backoff.isFinite ? min(max(0, backoff), Self.maximumBackoff) : 0.02 }
    }
    /// The most retries a policy makes.
    public static let maximumRetries = 20
    /// The longest first wait, in seconds.
    public static let maximumBackoff = 10.0
    /// Whether to go on after the first link (`false`: stop after it).
    public var fallback: Bool
    /// Whether the chain ends with the rule that needs no weights (geometric, cadence); `false` keeps to the
    /// weights variants (a model the user named: its variants, then an error).
    public var ruleFallback = true
    /// How to wait (replaced in tests).
    public var sleep: @Sendable (Double) -> Void

    /// Creates a policy; the default waits 20, 40, 80 ms before retries 1–3. `retries` and `backoff` are clamped
    /// as their properties are.
    public init(
        retries: Int = 3, backoff: Double = 0.02, fallback: Bool = true,
        sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) }
    ) {
        self.retries = min(max(0, retries), RetryPolicy.maximumRetries)
        self.backoff = backoff.isFinite ? min(max(0, backoff), RetryPolicy.maximumBackoff) : 0.02
        self.fallback = fallback
        self.sleep = sleep
    }
}

/// What happened after a failed attempt, for the caller to report (one line each).
public struct ChainEvent: Sendable {
    /// The failed attempt.
    public let attempt: ChainAttempt
    /// `retry n of m` on the same link, the next link's name, or `nil` when nothing follows.
    public let next: String?
}

/// Walks `links` in order: the first answer wins. Transient failures are retried on the same link per `policy`;
/// permanent failures move to the next link at once (or end the chain without fallback); bad input ends the chain
/// at once. `report` hears every failed attempt as it happens.
package func runChain<Answer>(
    _ links: [ChainLink<Answer>], policy: RetryPolicy = RetryPolicy(), report: (ChainEvent) -> Void = { _ in }
) throws(ChainFailure) -> (answer: Answer, model: String, attempts: [ChainAttempt]) {
    var attempts: [ChainAttempt] = []
    let usable = policy.fallback ? links : Array(links.prefix(1))
    for (index, link) in usable.enumerated() {
        var retry = 0
        while true {
            do {
                return (try link.run(), link.name, attempts)
            } catch {
                let kind = failureKind(of: error)
                let attempt = ChainAttempt(model: link.name, error: String(describing: error), kind: kind)
                attempts.append(attempt)
                if kind == .badInput, let data = error as? DataError {
                    report(ChainEvent(attempt: attempt, next: nil))
                    throw .badInput(data, attempts: attempts)
                }
                if kind == .transient && retry < policy.retries {
                    retry += 1
                    report(ChainEvent(attempt: attempt, next: "retry \(retry) of \(policy.retries)"))
                    policy.sleep(policy.backoff * Double(1 << min(retry - 1, 20)))
                    continue
                }
                let next = index + 1 < usable.count ? usable[index + 1].name : nil
                report(ChainEvent(attempt: attempt, next: next))
                break
            }
        }
    }
    throw .allFailed(attempts)
}
