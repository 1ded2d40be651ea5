import Foundation
import Tensor

/// Small synthetic datasets for the command-line tests, written as CSV.
enum TestDatasets {
    /// `count` drawings cycling circle, triangle, square, star: noisy outlines at random places and sizes.
    /// The drawings of a shape CSV (`drawing,label,…` first) whose label `names` maps, relabelled, at most `each`
    /// drawings of each new label: the generator's circles and squares as a user's own `ring` and `box`.
    static func relabelled(_ url: URL, _ names: [String: String], each: Int = .max) throws -> String {
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        var kept = [String(lines[0])], counts: [String: Int] = [:], last = ""
        for line in lines.dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            guard let label = names[fields[1]] else { continue }
            if fields[0] != last {
                last = fields[0]
                counts[label, default: 0] += 1
            }
            guard counts[label, default: 0] <= each else { continue }
            kept.append(([fields[0], label] + fields.dropFirst(2)).joined(separator: ","))
        }
        return kept.joined(separator: "\n") + "\n"
    }

    static func shapes(count: Int, seed: UInt64) -> String {
        var g = SeededGenerator(seed: seed)
        var lines = ["drawing,label,stroke,x,y,t"]
        let kinds = ["circle", "triangle", "square", "star"]
        for index in 0..<count {
            let kind = kinds[index % 4]
            var corners: [(Double, Double)] = []
            switch kind {
            case "circle": corners = (0...24).map { (cos(Double($0) * .pi / 12), sin(Double($0) * .pi / 12)) }
            case "triangle": corners = [(0, 1), (0.5, 0), (1, 1), (0, 1)]
            case "square": corners = [(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]
            default: corners = (0...5).map { k in (cos(-.pi / 2 + Double(k) * 4 * .pi / 5), sin(-.pi / 2 + Double(k) * 4 * .pi / 5)) }
            }
            let size = g.nextUniform(in: 50..<200), x0 = g.nextUniform(in: 0..<400), y0 = g.nextUniform(in: 0..<400)
            var t = 0
            for ((ax, ay), (bx, by)) in zip(corners, corners.dropFirst()) {
                for step in 0..<6 {
                    let f = Double(step) / 6
                    let x = x0 + size * (ax + (bx - ax) * f) + g.nextNormal(standardDeviation: 1)
                    let y = y0 + size * (ay + (by - ay) * f) + g.nextNormal(standardDeviation: 1)
                    lines.append("d\(index),\(kind),0,\(String(format: "%.2f", x)),\(String(format: "%.2f", y)),\(t)")
                    t += 10
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static let motionHeader =
        "session,label,attitude.roll,attitude.pitch,attitude.yaw,gravity.x,gravity.y,gravity.z,"
        + "rotationRate.x,rotationRate.y,rotationRate.z,userAcceleration.x,userAcceleration.y,userAcceleration.z"

    /// `sessions` sessions of `samples` samples at 50 Hz, alternating walking (slow, gentle) and running.
    /// `sessions` sessions of `samples` Core Motion rows at 50 Hz, walking and running in turn; with `sitting`, the
    /// odd sessions are `sitting` instead: a phone that barely moves (a few mg of noise).
    static func motion(sessions: Int, samples: Int, seed: UInt64, sitting: Bool = false) -> String {
        var g = SeededGenerator(seed: seed)
        var lines = [motionHeader]
        for session in 0..<sessions {
            let odd = session % 2 == 1
            let frequency = odd ? g.nextUniform(in: 2.5..<3) : g.nextUniform(in: 1.6..<2)
            let amplitude = odd ? (sitting ? 0 : 0.9) : 0.3
            let noise = odd && sitting ? 0.004 : 0.05
            let label = odd ? (sitting ? "sitting" : "running") : "walking"
            for i in 0..<samples {
                let v = amplitude * sin(2 * .pi * frequency * Double(i) / 50) + g.nextNormal(standardDeviation: noise)
                let spin = g.nextNormal(standardDeviation: 0.3) * amplitude
                lines.append("s\(session),\(label),0,0,0,0,-1,0,\(spin),0,0,0,\(String(format: "%.4f", -v)),0")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A fresh folder for one test, removed by the caller.
func testFolder() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("classify-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
