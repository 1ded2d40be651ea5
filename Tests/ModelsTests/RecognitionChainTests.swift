import DataFiles
import Foundation
import Synchronization
import Tensor
import Testing
import WeightsFormat

@testable import Models

/// A weights source whose loads fail in a scripted way: the first `transientFailures` loads of each variant are
/// transient, and variants in `broken` always fail permanently; other loads return `file`.
final class ScriptedSource: WeightsSource {
    let transientFailures: Int
    let broken: Set<String>
    let file: ModelFile
    let loads = Mutex<[String: Int]>([:])

    init(transientFailures: Int, broken: Set<String> = [], file: ModelFile) {
        self.transientFailures = transientFailures
        self.broken = broken
        self.file = file
    }

    func load(_ variant: String) throws -> ModelFile {
        let count = loads.withLock { loads in
            loads[variant, default: 0] += 1
            return loads[variant, default: 0]
        }
        if broken.contains(variant) {
            throw WeightsFileError(path: "\(variant).weights", problem: .checksumMismatch(stored: 1, computed: 2))
        }
        if count <= transientFailures {
            throw WeightsFileError(path: "\(variant).weights", problem: .unreadable("input/output error"))
        }
        return file
    }

    func loadCount(_ variant: String) -> Int { loads.withLock { $0[variant, default: 0] } }
}

/// Records the waits instead of sleeping.
final class Waits: Sendable {
    let values = Mutex<[Double]>([])
    var policySleep: @Sendable (Double) -> Void { { [self] seconds in values.withLock { $0.append(seconds) } } }
}

@Suite("Retry-with-fallback chain")
struct RecognitionChainTests {
    let file = try! ModelFile(
        name: "m", model: Sequential([Activation(.softmax)]), labels: ["a", "b"],
        input: InputSpec(shape: [2], description: "two numbers"))

    func links(_ source: ScriptedSource) -> [ChainLink<String>] {
        weightsLinks(["m.int8", "m.f32"], source: source) { file throws(DataError) in "model \(file.labels.count)" }
            + [ChainLink(name: "fallback") { "fallback answer" }]
    }

    @Test(arguments: [0, 1, 2, 3])
    func transientFailuresUpToTheRetriesSucceedOnTheSameLink(k: Int) throws {
        let source = ScriptedSource(transientFailures: k, file: file)
        let waits = Waits()
        var events: [ChainEvent] = []
        let result = try runChain(links(source), policy: RetryPolicy(retries: 3, sleep: waits.policySleep)) { events.append($0) }
        #expect(result.model == "m.int8")
        #expect(result.answer == "model 2")
        #expect(result.attempts.count == k)
        #expect(result.attempts.allSatisfy { $0.kind == .transient && $0.model == "m.int8" })
        #expect(source.loadCount("m.int8") == k + 1)
        #expect(source.loadCount("m.f32") == 0)
        #expect(waits.values.withLock { $0 } == Array([0.02, 0.04, 0.08].prefix(k)))
        #expect(events.map(\.next) == (0..<k).map { "retry \($0 + 1) of 3" })
    }

    @Test(arguments: [4, 10])
    func moreTransientFailuresThanRetriesMoveToTheNextLink(k: Int) throws {
        // Each variant fails transiently k times: int8 exhausts its 3 retries (4 tries); so does f32; the fallback answers.
        let source = ScriptedSource(transientFailures: k, file: file)
        var events: [ChainEvent] = []
        let result = try runChain(links(source), policy: RetryPolicy(retries: 3, sleep: { _ in })) { events.append($0) }
        #expect(result.model == "fallback")
        #expect(source.loadCount("m.int8") == 4 && source.loadCount("m.f32") == 4)
        #expect(result.attempts.count == 8)
        #expect(events.compactMap(\.next).filter { !$0.hasPrefix("retry") } == ["m.f32", "fallback"])
    }

    @Test func aPermanentFailureIsNeverRetried() throws {
        let source = ScriptedSource(transientFailures: 0, broken: ["m.int8"], file: file)
        let waits = Waits()
        let result = try runChain(links(source), policy: RetryPolicy(retries: 3, sleep: waits.policySleep))
        #expect(result.model == "m.f32")
        #expect(source.loadCount("m.int8") == 1)
        #expect(waits.values.withLock { $0 }.isEmpty)
        #expect(result.attempts.map(\.kind) == [.permanent])
        #expect(result.attempts.map(\.model) == ["m.int8"])
        #expect(result.attempts.first?.error.contains("checksum") == true)
    }

    @Test func withoutFallbackTheChainStopsAfterTheFirstLink() {
        let source = ScriptedSource(transientFailures: 0, broken: ["m.int8"], file: file)
        #expect {
            try runChain(links(source), policy: RetryPolicy(fallback: false))
        } throws: { error in
            guard case let .allFailed(attempts) = error as? ChainFailure else { return false }
            return attempts.map(\.model) == ["m.int8"]
        }
        #expect(source.loadCount("m.f32") == 0)
    }

    @Test func badInputStopsTheChainAtOnce() {
        let links = [
            ChainLink<String>(name: "first") { throw DataError(file: "d.csv", line: 3, message: "bad") },
            ChainLink(name: "second") { "never" },
        ]
        #expect {
            try runChain(links, policy: RetryPolicy(sleep: { _ in }))
        } throws: { error in
            guard case let .badInput(data, attempts) = error as? ChainFailure else { return false }
            return data.line == 3 && attempts.map(\.kind) == [.badInput]
        }
    }

    @Test func anIncompatibleModelIsPermanentNotBadInput() throws {
        let source = ScriptedSource(transientFailures: 0, file: file)
        let links =
            weightsLinks(["m.int8"], source: source) { _ throws(DataError) -> String in
                throw DataError(file: "m.int8", message: "the model takes input [2]")
            } + [ChainLink(name: "fallback") { "fallback answer" }]
        let result = try runChain(links)
        #expect(result.model == "fallback")
        #expect(result.attempts.map(\.kind) == [.permanent])
    }
}
