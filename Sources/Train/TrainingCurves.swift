import Foundation
import Models

/// Training curves as an SVG image: loss (left) and accuracy (right) per epoch, training and validation, with
/// the best epoch marked and labelled.
///
/// Each panel's vertical axis is zoomed to its data (accuracy that stays between 96% and 99% fills the panel
/// rather than its top tenth), with round-numbered ticks and light grid lines; the epoch axis has whole-epoch
/// ticks; the legend sits under the title, outside both panels, so it never covers a line.
public enum TrainingCurves {
    /// The attribute of the SVG root element that records the run (the weights lookup reads it beside the files).
    package static let runAttribute = "data-training-run"

    /// The SVG document for `history`; `run` (the run identity its weights files record) goes in the root
    /// element's `data-training-run` attribute, so that a curves file from another run is detectable.
    public static func svg(_ history: [EpochSummary], title: String, run: String? = nil) -> String {
        let panelWidth = 360.0, panelHeight = 220.0, left = 56.0, gap = 70.0, top = 64.0
        let width = left + 2 * panelWidth + gap + 24, height = top + panelHeight + 52
        var parts = [
            #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" font-family="sans-serif" font-size="11"\#(run.map { " \(TrainingCurves.runAttribute)=\"\(escape($0))\"" } ?? "")>"#,
            #"<rect width="100%" height="100%" fill="white"/>"#,
            #"<text x="\#(left)" y="20" font-size="13">\#(escape(title))</text>"#,
        ]
        let series = [("training", "#1f77b4"), ("validation", "#d62728")]
        // The legend, once, above the panels.
        var legendX = left
        for (label, color) in series where label == "training" || history.contains(where: { $0.validationLoss != nil }) {
            parts.append(#"<line x1="\#(legendX)" y1="38" x2="\#(legendX + 22)" y2="38" stroke="\#(color)" stroke-width="2"/>"#)
            parts.append(#"<text x="\#(legendX + 28)" y="42">\#(label)</text>"#)
            legendX += 110
        }
        let bestEpoch = history.last(where: \.isBest)
        if bestEpoch != nil {
            parts.append(#"<line x1="\#(legendX)" y1="38" x2="\#(legendX + 22)" y2="38" stroke="green" stroke-dasharray="4 3"/>"#)
            parts.append(#"<text x="\#(legendX + 28)" y="42">best epoch (its weights are kept)</text>"#)
        }
        let losses = history.flatMap { [$0.trainingLoss] + ($0.validationLoss.map { [$0] } ?? []) }.filter(\.isFinite)
        let accuracies = history.flatMap { [$0.trainingAccuracy] + ($0.validationAccuracy.map { [$0] } ?? []) }.filter(\.isFinite)
        let lossAxis = Axis(zoomedTo: losses, floor: 0, ceiling: nil)
        let accuracyAxis = Axis(zoomedTo: accuracies, floor: 0, ceiling: 1)
        let panels: [(name: String, axis: Axis, percent: Bool, values: [[Double?]])] = [
            ("loss", lossAxis, false, [history.map { $0.trainingLoss }, history.map { $0.validationLoss }]),
            ("accuracy", accuracyAxis, true, [history.map { $0.trainingAccuracy }, history.map { $0.validationAccuracy }]),
        ]
        let epochs = max(history.count, 1)
        let epochStep = Axis.niceStep(Double(epochs) / 8, minimum: 1)
        for (index, panel) in panels.enumerated() {
            let x0 = left + Double(index) * (panelWidth + gap)
            func x(_ epoch: Int) -> Double { x0 + (epochs > 1 ? Double(epoch - 1) / Double(epochs - 1) : 0.5) * panelWidth }
            func y(_ value: Double) -> Double {
                top + panelHeight - (min(max(value, panel.axis.low), panel.axis.high) - panel.axis.low) / (panel.axis.high - panel.axis.low)
                    * panelHeight
            }
            parts.append(#"<text x="\#(x0)" y="\#(top - 8)" font-weight="bold">\#(panel.name)</text>"#)
            for tick in panel.axis.ticks {
                parts.append(#"<line x1="\#(x0)" y1="\#(f(y(tick)))" x2="\#(x0 + panelWidth)" y2="\#(f(y(tick)))" stroke="gainsboro"/>"#)
                let label = panel.percent ? Axis.label(tick * 100, step: panel.axis.step * 100) + "%" : Axis.label(tick, step: panel.axis.step)
                parts.append(#"<text x="\#(x0 - 5)" y="\#(f(y(tick) + 4))" text-anchor="end">\#(label)</text>"#)
            }
            var epoch = 1
            while epoch <= epochs {
                parts.append(
                    #"<line x1="\#(f(x(epoch)))" y1="\#(top + panelHeight)" x2="\#(f(x(epoch)))" y2="\#(top + panelHeight + 4)" stroke="gray"/>"#)
                parts.append(#"<text x="\#(f(x(epoch)))" y="\#(top + panelHeight + 16)" text-anchor="middle">\#(epoch)</text>"#)
                epoch = epoch == 1 && Int(epochStep) > 1 ? Int(epochStep) : epoch + Int(epochStep)
            }
            parts.append(#"<text x="\#(x0 + panelWidth / 2)" y="\#(top + panelHeight + 34)" text-anchor="middle">epoch</text>"#)
            parts.append(#"<rect x="\#(x0)" y="\#(top)" width="\#(panelWidth)" height="\#(panelHeight)" fill="none" stroke="gray"/>"#)
            if let bestEpoch {
                let bx = x(bestEpoch.epoch)
                parts.append(#"<line x1="\#(f(bx))" y1="\#(top)" x2="\#(f(bx))" y2="\#(top + panelHeight)" stroke="green" stroke-dasharray="4 3"/>"#)
                let value =
                    panel.percent ? bestEpoch.validationAccuracy ?? bestEpoch.trainingAccuracy : bestEpoch.validationLoss ?? bestEpoch.trainingLoss
                let text = "epoch \(bestEpoch.epoch): " + (panel.percent ? String(format: "%.1f%%", 100 * value) : String(format: "%.3f", value))
                // Inside the panel, on the side of the line with room for it, at the bottom (loss) or top (accuracy),
                // where the curves are not.
                let anchorEnd = bx > x0 + panelWidth - 110
                let ty = panel.percent ? top + panelHeight - 8 : top + 14
                parts.append(
                    #"<text x="\#(f(bx + (anchorEnd ? -4 : 4)))" y="\#(f(ty))" fill="green" text-anchor="\#(anchorEnd ? "end" : "start")">\#(text)</text>"#
                )
            }
            for ((_, color), values) in zip(series, panel.values) {
                let points = values.enumerated().compactMap { epoch, value in
                    value.flatMap { $0.isFinite ? String(format: "%.1f,%.1f", x(epoch + 1), y($0)) : nil }
                }
                guard !points.isEmpty else { continue }
                parts.append(#"<polyline fill="none" stroke="\#(color)" stroke-width="2" points="\#(points.joined(separator: " "))"/>"#)
            }
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    /// `value` with one decimal, for coordinates.
    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }

    private static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// A vertical axis zoomed to some values: from a round number at or below the lowest to one at or above the
    /// highest, within `floor`…`ceiling`, with four to six ticks.
    struct Axis {
        let low: Double, high: Double, step: Double

        init(zoomedTo values: [Double], floor: Double, ceiling: Double?) {
            var lowest = values.min() ?? floor, highest = values.max() ?? (ceiling ?? 1)
            if highest - lowest < 1e-9 {
                // A flat line: a small band around it.
                lowest -= 0.05 * max(abs(lowest), 0.02)
                highest += 0.05 * max(abs(highest), 0.02)
            }
            let step = Axis.niceStep((highest - lowest) / 4, minimum: 0)
            var low = (lowest / step).rounded(.down) * step, high = (highest / step).rounded(.up) * step
            low = Swift.max(low, floor)
            if let ceiling { high = Swift.min(high, ceiling) }
            if high <= low { high = low + step }
            (self.low, self.high, self.step) = (low, high, step)
        }

        /// The ticks: every step from low to high.
        var ticks: [Double] {
            var result: [Double] = []
            var tick = low
            while tick <= high + step * 1e-6 && result.count < 20 {
                result.append(tick)
                tick += step
            }
            return result
        }

        /// 1, 2 or 5 times a power of ten, at least `raw` (and `minimum`).
        static func niceStep(_ raw: Double, minimum: Double) -> Double {
            guard raw > 0, raw.isFinite else { return Swift.max(minimum, 1) }
            let power = pow(10, (log10(raw)).rounded(.down))
            let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? 10 * power
            return Swift.max(step, minimum)
        }

        /// `value` with as many decimals as `step` needs.
        static func label(_ value: Double, step: Double) -> String {
            let decimals = step >= 1 ? 0 : Int((-log10(step)).rounded(.up))
            return String(format: "%.\(Swift.min(decimals, 6))f", value)
        }
    }
}
