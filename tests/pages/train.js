// The Train part mounted next to an explorer through the element's public
// API (state, config, inputs), as the element's own Train part does.
import '../../web/explorer.js';
import { loadAttention } from '../../web/attention.js';
import { TRAIN_STYLES, TrainPanel } from '../../web/explorer-train-view.js';

const explorer = document.getElementById('explorer');
const attn = await loadAttention();
const mount = document.getElementById('train');
const root = mount.attachShadow({ mode: 'open' });
const style = document.createElement('style');
style.textContent = TRAIN_STYLES;
const panel = new TrainPanel({ attn, host: explorer });
root.append(style, panel.element);
explorer.addEventListener('attention-change', () => panel.sync());
panel.sync();
window.trainPanel = panel;
