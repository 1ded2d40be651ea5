import Foundation
import Testing

/// A classify binary with no weights folder anywhere answers with the weights built into it.
@Suite("classify: built-in weights")
struct BuiltInWeightsTests {
    @Test(arguments: [("shape", "star.csv", "shape-classifier.int8", "star"), ("motion", "walking.csv", "motion-state.int8", "walking")])
    func noFolderMeansTheBuiltInWeights(task: String, example: String, model: String, label: String) throws {
        let classify = try IsolatedClassify()
        defer { classify.remove() }
        let input = packageRoot.appendingPathComponent("Datasets/examples/\(example)").path
        let run = try classify.run([task, input, "--json"])
        #expect(run.status == 0, "\(run.standardError)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        #expect(object["model"] as? String == model && object["label"] as? String == label, "\(run.standardOutput)")
        #expect(run.standardError == "", "\(run.standardError)")
    }
}
