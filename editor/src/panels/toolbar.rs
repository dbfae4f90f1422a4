//! The toolbar: the viewport tools (select, add entry, add exit, circle,
//! polygon) and the snap steps.

use crate::tools::{ToolBox, ToolKind};
use egui::Ui;

/// The toolbar (no state of its own: the tool is [`ToolBox`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ToolbarPanel;

impl ToolbarPanel {
    /// Draws the toolbar.
    pub fn ui(&mut self, ui: &mut Ui, tools: &mut ToolBox) {
        ui.heading("Tools");
        ui.horizontal_wrapped(|ui| {
            for kind in ToolKind::ALL {
                let on = tools.kind() == kind;
                if ui.selectable_label(on, kind.label()).on_hover_text(format!("key {:?}", kind.key())).clicked() {
                    tools.set(kind);
                }
            }
        });
        let snap = &mut tools.snap;
        ui.horizontal(|ui| {
            ui.checkbox(&mut snap.on, "Snap");
            ui.add(egui::DragValue::new(&mut snap.space).range(0.01..=4.0).speed(0.01).suffix(" m"));
            ui.add(egui::DragValue::new(&mut snap.time).range(0.01..=5.0).speed(0.01).suffix(" s"));
        });
    }
}
