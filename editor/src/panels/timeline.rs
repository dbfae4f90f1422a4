//! The timeline: play and pause, back to 0, the play time, speed and loop.

use crate::state::Playback;
use egui::Ui;

/// The timeline (no state of its own: the clock is [`Playback`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Timeline;

impl Timeline {
    /// Draws the timeline of `playback` over a period of `period` `[s]`.
    pub fn ui(ui: &mut Ui, playback: &mut Playback, period: f64) {
        ui.horizontal(|ui| {
            let label = if playback.playing { "Pause" } else { "Play" };
            if ui.button(label).on_hover_text("Space").clicked() {
                playback.playing = !playback.playing;
            }
            if ui.button("|<").on_hover_text("Back to t = 0").clicked() {
                playback.time = 0.0;
            }
            ui.label("t");
            let mut t = playback.time;
            let slider = egui::Slider::new(&mut t, 0.0..=period).suffix(" s").fixed_decimals(2).text("time");
            ui.spacing_mut().slider_width = (ui.available_width() - 360.0).max(120.0);
            if ui.add(slider).changed() {
                playback.time = t.min(period - 1e-6).max(0.0);
            }
            ui.label("speed");
            egui::ComboBox::from_id_salt("speed").selected_text(format!("{}×", playback.speed)).show_ui(ui, |ui| {
                for s in [0.1f32, 0.25, 0.5, 1.0, 2.0, 4.0] {
                    ui.selectable_value(&mut playback.speed, s, format!("{s}×"));
                }
            });
            ui.checkbox(&mut playback.looping, "Loop");
        });
    }
}
