import Foundation
import Models

/// Training curves as an SVG image: loss (left) and accuracy (right) per epoch, training and validation, with
/// the best epoch marked.
public enum TrainingCurves {
    /// The SVG document for `history`; `run` (the run identity its weights files record) goes in the root
    /// element's `data-training-run` attribute, so that a curves file from another run is detectable.
    public static func svg(_ history: [EpochSummary], title: String, run: String? = nil) -> String {
        let panelWidth = 360.0, panelHeight = 220.0, margin = 44.0
        let width = 2 * (panelWidth + margin) + margin, height = panelHeight + 2 * margin + 20
        var parts = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" font-family="sans-serif" font-size="11"\#(run.map { " \(WeightsLocator.curvesRunAttribute)=\"\(escape($0))\"" } ?? "")>"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
            #"<text x="\#(margin)" y="18" font-size="13">\#(escape(title))</text>"#,
        ]
        let best = history.last(where: \.isBest)?.epoch
        let losses = history.flatMap { [$0.trainingLoss] + ($0.validationLoss.map { [$0] } ?? []) }
        let panels: [(String, Double, Double, [(String, String, [Double?])])] = [
            ("loss", 0, max(losses.max() ?? 1, 1e-9), [
                ("training", "#1f77b4", history.map { $0.trainingLoss }),
                ("validation", "#d62728", history.map { $0.validationLoss }),
            ]),
            ("accuracy", 0, 1, [
                ("training", "#1f77b4", history.map { $0.trainingAccuracy }),
                ("validation", "#d62728", history.map { $0.validationAccuracy }),
            ]),
        ]
        for (index, (name, low, high, series)) in panels.enumerated() {
            let left = margin + Double(index) * (panelWidth + margin), top = margin
            func x(_ epoch: Int) -> Double {
                left + (history.count > 1 ? Double(epoch - 1) / Double(history.count - 1) : 0.5) * panelWidth
            }
            func y(_ value: Double) -> Double { top + panelHeight - (value - low) / (high - low) * panelHeight }
            parts.append(#"<rect x="\#(left)" y="\#(top)" width="\#(panelWidth)" height="\#(panelHeight)" fill="none" stroke="gray"/>"#)
            parts.append(#"<text x="\#(left)" y="\#(top - 6)">\#(name)</text>"#)
            for fraction in [0.0, 0.5, 1.0] {
                let value = low + fraction * (high - low)
                parts.append(#"<text x="\#(left - 4)" y="\#(y(value) + 4)" text-anchor="end">\#(String(format: "%.2f", value))</text>"#)
            }
            parts.append(#"<text x="\#(left + panelWidth / 2)" y="\#(top + panelHeight + 28)" text-anchor="middle">epoch (1–\#(history.count))</text>"#)
            if let best {
                parts.append(#"<line x1="\#(x(best))" y1="\#(top)" x2="\#(x(best))" y2="\#(top + panelHeight)" stroke="green" stroke-dasharray="4 3"/>"#)
            }
            for (row, (label, color, values)) in series.enumerated() {
                let points = values.enumerated().compactMap { epoch, value in
                    value.map { String(format: "%.1f,%.1f", x(epoch + 1), y($0)) }
                }
                guard !points.isEmpty else { continue }
                parts.append(#"<polyline fill="none" stroke="\#(color)" stroke-width="2" points="\#(points.joined(separator: " "))"/>"#)
                parts.append(#"<text x="\#(left + panelWidth - 80)" y="\#(top + 16 + 14 * Double(row))" fill="\#(color)">\#(label)</text>"#)
            }
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
