/**
 * Outputs recorded from the GPU tools (no GPU on the test machines). nvidia-smi was run as
 * `nvidia-smi --query-gpu=index,name,uuid,memory.total,memory.used,utilization.gpu,temperature.gpu
 * --format=csv,noheader,nounits`; rocm-smi as `rocm-smi --showproductname --showmeminfo vram
 * --showuse --showtemp --showuniqueid --json`.
 */

/** Two H100s, one idle and one busy. */
export const NVIDIA_H100_PAIR = `0, NVIDIA H100 80GB HBM3, GPU-4b1a7d0e-2f5c-8e7a-93d1-6c0f3b2a9e17, 81559, 4, 0, 32
1, NVIDIA H100 80GB HBM3, GPU-9e3c5a21-7b4d-1f6e-a08c-2d5b7e9f1c43, 81559, 61440, 97, 58
`;

/** A MIG-enabled A100 (utilization not available) and a board without a temperature sensor reading. */
export const NVIDIA_WITH_NA = `0, NVIDIA A100-SXM4-40GB, GPU-1f2e3d4c-5b6a-7980-a1b2-c3d4e5f60718, 40960, 0, [N/A], 29
1, Tesla T4, GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9, 15360, 1024, 12, [Not Supported]
`;

/** What nvidia-smi prints (on stdout, exit code 9) when the driver is not loaded. */
export const NVIDIA_NO_DRIVER = `NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.
`;

/** ROCm 5.x: lower-case "Card series" keys, a "system" section. */
export const ROCM_5_MI250X = `{"card0": {"Temperature (Sensor edge) (C)": "34.0", "Temperature (Sensor junction) (C)": "37.0", "Temperature (Sensor memory) (C)": "32.0", "GPU use (%)": "0", "VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "10960896", "Card series": "AMD INSTINCT MI250X", "Card model": "0x740c", "Card vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "D65210V", "Unique ID": "0x1c3d2a5f6e7b8c9d"}, "card1": {"Temperature (Sensor edge) (C)": "41.0", "Temperature (Sensor junction) (C)": "45.0", "Temperature (Sensor memory) (C)": "39.0", "GPU use (%)": "88", "VRAM Total Memory (B)": "68702699520", "VRAM Total Used Memory (B)": "34351349760", "Card series": "AMD INSTINCT MI250X", "Card model": "0x740c", "Card vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "D65210V", "Unique ID": "0x5e6f7a8b9c0d1e2f"}, "system": {"Driver version": "6.2.4"}}
`;

/** ROCm 6.x: title-case keys, no edge sensor (junction only), and a warning line before the JSON. */
export const ROCM_6_MI300X = `WARNING: AMD GPU device(s) is/are in a low-power state. Check power control/runtime_status

{"card0": {"Temperature (Sensor junction) (C)": "46.0", "Temperature (Sensor memory) (C)": "38.0", "GPU use (%)": "3", "VRAM Total Memory (B)": "205822885888", "VRAM Total Used Memory (B)": "302559232", "Card Series": "AMD Instinct MI300X", "Card Model": "0x74a1", "Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "M3000100", "Subsystem ID": "0x74a1", "Device Rev": "0x00", "Node ID": "2", "GUID": "28851", "GFX Version": "gfx942", "Unique ID": "0x8a7b6c5d4e3f2a1b"}}
`;
