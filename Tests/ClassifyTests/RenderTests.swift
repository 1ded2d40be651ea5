import Foundation
import Testing

/// `classify shape --render`: the verdict in words on top, and nothing drawn past the picture's edge.
@Suite("classify shape --render")
struct RenderTests {
    /// Every `x="…"` and `width="…"` in the picture, and its width.
    func horizontalExtent(_ svg: String) throws -> (rightmostText: Double, width: Double) {
        let width = try #require(svg.firstMatch(of: /<svg[^>]* width="([0-9.]+)"/).flatMap { Double($0.1) })
        let texts = svg.matches(of: /<text x="([0-9.]+)"[^>]*>([^<]*)</).compactMap { match in
            Double(match.1).map { $0 + 7 * Double(match.2.count) }  // 12 px sans-serif: at most ~7 px a character
        }
        return (texts.max() ?? 0, width)
    }

    /// The verdict as the picture writes it: the answer's label and confidence from `classify shape --json` of the
    /// same file (for `unknown`, the words that open it).
    func verdict(of example: String) throws -> String {
        let run = try CommandRun.classifyAtRoot(["shape", "Datasets/examples/\(example)", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(run.standardOutput.utf8)) as? [String: Any])
        let label = try #require(object["label"] as? String), confidence = try #require(object["confidence"] as? Double)
        return label == "unknown" ? "unknown: none of the classes (nearest " : "\(label), \(String(format: "%.1f", 100 * confidence))%"
    }

    @Test(arguments: ["other.csv", "star.csv"])
    func theVerdictIsWrittenOutAndEverythingFits(example: String) throws {
        let verdict = try verdict(of: example)
        #expect(verdict.hasPrefix(example == "other.csv" ? "unknown" : "star, "), "\(verdict)")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("render-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let svg = folder.appendingPathComponent("picture.svg")
        let run = try CommandRun.classifyAtRoot(["shape", "Datasets/examples/\(example)", "--render", svg.path])
        #expect(run.status == 0, "\(run.standardError)")
        let picture = try String(contentsOf: svg, encoding: .utf8)
        #expect(picture.contains(verdict), "\(picture.prefix(600))")
        #expect(picture.contains("model shape-classifier.int8"))
        let (rightmost, width) = try horizontalExtent(picture)
        #expect(rightmost <= width, "text reaches x = \(rightmost) in a picture \(width) wide")
    }
}
