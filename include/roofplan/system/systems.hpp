// roofplan/system/systems.hpp — the built-in systems of SPEC.md §2/§4, each with the source of its topology.
#pragma once

#include <roofplan/detail/suggest.hpp>
#include <roofplan/system/topology.hpp>

#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace roofplan {

namespace detail {

/// PCIe per-direction bandwidth of an x16 slot (raw link rate; protocol efficiency is in LinkParameters).
constexpr double pcie_x16_gb_s(int generation) {
    return generation >= 5 ? 63.0 : generation == 4 ? 31.5 : 15.75;
}

inline System base(std::string_view id, std::string_view name, std::string_view device, int gpus,
                   std::vector<int> sockets, double host_gb_s, LinkKind host_kind = LinkKind::pcie) {
    System s;
    s.id = FixedString<31>(id);
    s.name = FixedString<127>(name);
    s.device = FixedString<31>(device);
    s.gpus_per_node = gpus;
    s.socket = std::move(sockets);
    s.nvlinks = LinkMatrix(gpus);
    s.host.assign(static_cast<std::size_t>(gpus), HostLink{host_kind, host_gb_s});
    return s;
}

inline void link(System& s, int a, int b, int count) {
    s.nvlinks(a, b) = count;
    s.nvlinks(b, a) = count;
}

/// DGX-1V hybrid cube-mesh (SPEC.md §4): double links 0–3, 0–4, 1–2, 1–5, 2–3, 4–7, 5–6, 6–7; single links
/// 0–1, 0–2, 1–3, 2–6, 3–7, 4–5, 4–6, 5–7.  Every GPU uses its 6 NVLink2 ports (25 GB/s per direction each).
inline void cube_mesh(System& s) {
    for (auto [a, b] : {std::pair{0, 3}, {0, 4}, {1, 2}, {1, 5}, {2, 3}, {4, 7}, {5, 6}, {6, 7}}) link(s, a, b, 2);
    for (auto [a, b] : {std::pair{0, 1}, {0, 2}, {1, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {5, 7}}) link(s, a, b, 1);
    s.nvlink_gb_s = 25;
}

/// GPU pairs 0-3 on socket 0, 4-7 on socket 1: the 8-GPU servers' host layout.
inline std::vector<int> two_sockets_8() { return {0, 0, 0, 0, 1, 1, 1, 1}; }

/// The V100 and POWER9 servers of the source benchmarks (SPEC.md section 2).
inline void add_volta_servers(std::vector<System>& all) {
    {
        System s = base("dgx1v", "NVIDIA DGX-1 with 8x V100 SXM2 (hybrid cube-mesh)", "v100-sxm2-32gb", 8,
                        two_sockets_8(), pcie_x16_gb_s(3));
        cube_mesh(s);
        s.socket_bus_gb_s = 19.2;  // one QPI link at 9.6 GT/s (Xeon E5-2698 v4)
        s.network = {"4x InfiniBand EDR", 50.0, 0, 5e-6};
        s.max_nodes = 16;
        s.source = "NVIDIA DGX-1 System Architecture whitepaper (WP-08437-002): hybrid cube-mesh, NVLink 2.0";
        s.cpu = {"Intel Xeon E5-2698 v4", 2, 20, 2.2};
        s.cpu_source = "NVIDIA DGX-1 datasheet: 2x Intel Xeon E5-2698 v4, 20 cores, 2.2 GHz";
        all.push_back(s);
    }
    {
        System s = base("aws-p3dn", "AWS p3dn.24xlarge: 8x V100 SXM2 32 GB (DGX-1V cube-mesh), 100 Gbit/s Ethernet",
                        "v100-sxm2-32gb", 8, two_sockets_8(), pcie_x16_gb_s(3));
        cube_mesh(s);
        s.socket_bus_gb_s = 20.8;  // UPI 10.4 GT/s (Xeon Platinum 8175M)
        s.network = {"100 Gbit/s Ethernet (ENA, TCP)", 12.5, 1.25, 30e-6};
        s.max_nodes = 16;
        s.source = "AWS EC2 p3dn.24xlarge: 100 Gbit/s networking; a single TCP flow is limited to 10 Gbit/s "
                   "(AWS ENA documentation); NVLink topology as DGX-1V";
        s.cpu = {"Intel Xeon Platinum 8175M", 2, 24, 2.5};
        s.cpu_source = "AWS EC2 P3 instances: p3dn.24xlarge, 96 vCPUs of Intel Xeon Platinum 8175M (2x 24 cores, 2.5 GHz)";
        all.push_back(s);
    }
    {
        System s = base("dgx2", "NVIDIA DGX-2: 16x V100 SXM2 32 GB on 12 NVSwitches", "v100-sxm2-32gb", 16,
                        {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, pcie_x16_gb_s(3));
        s.switch_gb_s = 6 * 25.0;  // one NVLink to each of the 6 local switches
        s.socket_bus_gb_s = 20.8;
        s.network = {"8x InfiniBand EDR", 100.0, 0, 5e-6};
        s.max_nodes = 16;
        s.source = "NVIDIA DGX-2 System Architecture whitepaper: 12 NVSwitches, 150 GB/s per GPU per direction";
        s.cpu = {"Intel Xeon Platinum 8168", 2, 24, 2.7};
        s.cpu_source = "NVIDIA DGX-2 datasheet: 2x Intel Xeon Platinum 8168, 24 cores, 2.7 GHz";
        all.push_back(s);
    }
    {
        System s = base("ibm-ac922", "IBM Power System AC922 (8335-GTH): 2x POWER9, 4x V100 SXM2 32 GB",
                        "v100-sxm2-32gb", 4, {0, 0, 1, 1}, 3 * 25.0, LinkKind::nvlink);
        link(s, 0, 1, 3);
        link(s, 2, 3, 3);
        s.nvlink_gb_s = 25;
        s.socket_bus_gb_s = 32;  // X-bus SMP link
        s.network = {"InfiniBand EDR", 24.0, 0, 5e-6};
        s.max_nodes = 4;
        s.source = "IBM Redpaper REDP-5494 (AC922 8335-GTH): 3 NVLink 2.0 bricks CPU-GPU and GPU-GPU, X-bus 32 GB/s";
        s.cpu = {"IBM POWER9", 2, 20, 2.4};
        s.cpu_source = "IBM Redpaper REDP-5494: 8335-GTH with 2x POWER9 of 16 or 20 cores; 20 cores at 2.4 GHz assumed";
        all.push_back(s);
    }
}

/// PCIe servers and workstations: GeForce, Quadro, Tesla and A100 PCIe cards, and the SR670 V2's SXM4 board.
inline void add_pcie_systems(std::vector<System>& all) {
    {
        System s = base("exxact-ts4", "Exxact TensorEX TS4: 8x RTX 2080 Ti on PCIe Gen3, 2 sockets", "rtx2080ti", 8,
                        two_sockets_8(), pcie_x16_gb_s(3));
        s.socket_bus_gb_s = 20.8;
        s.source = "Exxact TS4-1910483 product page: 8 GPUs on PCIe 3.0 x16, dual Xeon Scalable (UPI 10.4 GT/s)";
        all.push_back(s);
    }
    {
        System s = base("sr670v2-a100-pcie", "Lenovo ThinkSystem SR670 V2: 8x A100 PCIe 80 GB", "a100-pcie-80gb", 8,
                        two_sockets_8(), pcie_x16_gb_s(4));
        s.socket_bus_gb_s = 3 * 22.4;  // three UPI links at 11.2 GT/s (Xeon Ice Lake)
        s.source = "Lenovo Press LP1392 (SR670 V2): PCIe Gen4 x16 per GPU through PCIe switches, dual Xeon Ice Lake";
        s.cpu = {"Intel Xeon Platinum 8360Y", 2, 36, 2.4};
        s.cpu_source = "MLPerf Training v3.0, Lenovo SR670 V2 system description: 2x Intel Xeon Platinum 8360Y, 36 cores, 2.4 GHz";
        all.push_back(s);
    }
    {
        System s = base("sr670v2-a100-sxm4", "Lenovo ThinkSystem SR670 V2: 4x A100 SXM4 40 GB (HGX A100 4-GPU)",
                        "a100-sxm4-40gb", 4, {0, 0, 1, 1}, pcie_x16_gb_s(4));
        for (int a = 0; a < 4; ++a)
            for (int b = a + 1; b < 4; ++b) link(s, a, b, 4);  // 12 NVLink3 per GPU, 4 to each peer
        s.nvlink_gb_s = 25;
        s.socket_bus_gb_s = 3 * 22.4;
        s.source = "Lenovo Press LP1392; NVIDIA HGX A100 4-GPU: GPUs fully connected by NVLink3, 4 links per pair";
        s.cpu = {"Intel Xeon Platinum 8360Y", 2, 36, 2.4};
        s.cpu_source = "MLPerf Training v3.0, Lenovo SR670 V2 system description: 2x Intel Xeon Platinum 8360Y, 36 cores, 2.4 GHz";
        all.push_back(s);
    }
    for (auto [id, name, device] : {std::tuple{"p920-rtx8000", "Lenovo ThinkStation P920: 2x Quadro RTX 8000 + NVLink bridge", "quadro-rtx8000"},
                                    {"p920-titan-rtx", "Lenovo ThinkStation P920: 2x Titan RTX + NVLink bridge", "titan-rtx"}}) {
        System s = base(id, name, device, 2, {0, 0}, pcie_x16_gb_s(3));
        link(s, 0, 1, 2);  // the Turing NVLink bridge: 2 links, 50 GB/s per direction
        s.nvlink_gb_s = 25;
        s.source = "Lenovo ThinkStation P920 spec sheet; NVIDIA Quadro/Titan RTX NVLink bridge (2 links, 100 GB/s total)";
        all.push_back(s);
    }
    {
        System s = base("r740-p40", "Dell PowerEdge R740: 3x Tesla P40 on PCIe Gen3, 2x Xeon Gold 6150", "p40", 3,
                        {0, 0, 1}, pcie_x16_gb_s(3));
        s.socket_bus_gb_s = 2 * 20.8;
        s.source = "Dell PowerEdge R740 technical guide: up to 3 double-width GPUs, PCIe Gen3 x16; Xeon Gold 6150 UPI";
        s.cpu = {"Intel Xeon Gold 6150", 2, 18, 2.7};
        s.cpu_source = "SPEC.md section 4 (2x Xeon Gold 6150); Intel ARK: Xeon Gold 6150, 18 cores, 2.7 GHz";
        all.push_back(s);
    }
    {
        System s = base("r740-p4", "Dell PowerEdge R740: 4x Tesla P4 on PCIe Gen3, 2x Xeon Gold 6150", "p4", 4,
                        {0, 0, 1, 1}, pcie_x16_gb_s(3));
        s.socket_bus_gb_s = 2 * 20.8;
        s.source = "Dell PowerEdge R740 technical guide: up to 4 single-width GPUs, PCIe Gen3 x16";
        s.cpu = {"Intel Xeon Gold 6150", 2, 18, 2.7};
        s.cpu_source = "SPEC.md section 4 (2x Xeon Gold 6150); Intel ARK: Xeon Gold 6150, 18 cores, 2.7 GHz";
        all.push_back(s);
    }
}

/// The NVSwitch and NVLink4 servers of the Ampere and Hopper generations.
inline void add_ampere_hopper_servers(std::vector<System>& all) {
    {
        System s = base("dgx-a100", "NVIDIA DGX A100: 8x A100 SXM4 80 GB on 6 NVSwitches", "a100-sxm4-80gb", 8,
                        two_sockets_8(), pcie_x16_gb_s(4));
        s.switch_gb_s = 12 * 25.0;
        s.socket_bus_gb_s = 4 * 32.0;  // AMD Infinity Fabric between the two EPYC 7742
        s.network = {"8x InfiniBand HDR", 200.0, 0, 5e-6};
        s.max_nodes = 140;
        s.source = "NVIDIA DGX A100 System Architecture whitepaper: 12 NVLink3 per GPU to 6 NVSwitches, 8x HDR 200";
        s.cpu = {"AMD EPYC 7742", 2, 64, 2.25};
        s.cpu_source = "NVIDIA DGX A100 datasheet: 2x AMD EPYC 7742, 64 cores, 2.25 GHz";
        all.push_back(s);
    }
    {
        System s = base("dgx-h100", "NVIDIA DGX H100: 8x H100 SXM5 on 4 NVSwitches", "h100-sxm", 8, two_sockets_8(),
                        pcie_x16_gb_s(5));
        s.switch_gb_s = 18 * 25.0;
        s.socket_bus_gb_s = 4 * 32.0;
        s.network = {"8x InfiniBand NDR", 400.0, 0, 5e-6};
        s.max_nodes = 128;
        s.source = "NVIDIA DGX H100 user guide: 18 NVLink4 per GPU (900 GB/s bidirectional) through NVSwitch, 8x NDR 400";
        s.cpu = {"Intel Xeon Platinum 8480C", 2, 56, 2.0};
        s.cpu_source = "NVIDIA DGX H100 datasheet: 2x Intel Xeon Platinum 8480C, 56 cores, 2.0 GHz";
        all.push_back(s);
    }
    {
        System s = base("hgx-h200-4", "HGX H200 4-GPU: 4x H200, all pairs NVLink4 (NV18)", "h200", 4, {0, 0, 1, 1},
                        pcie_x16_gb_s(5));
        s.switch_gb_s = 18 * 25.0;  // each GPU's 18 links reach its peers at 450 GB/s per direction in total
        s.socket_bus_gb_s = 4 * 32.0;
        s.source = "nvidia-smi topo -m on the lent 4-GPU H200 machine: NV18 between every pair; H200 datasheet: "
                   "NVLink 900 GB/s";
        s.cpu = {"Intel Xeon (Firecracker guest, 64 vCPUs)", 1, 64, 0};
        s.cpu_source = "the lent 4-GPU H200 machine: 64 CPU cores (device/KINDS.md)";
        all.push_back(s);
    }
    {
        System s = base("hgx-h200-8", "HGX H200 8-GPU: 8x H200 on NVSwitch", "h200", 8, two_sockets_8(),
                        pcie_x16_gb_s(5));
        s.switch_gb_s = 18 * 25.0;
        s.socket_bus_gb_s = 4 * 32.0;
        s.source = "NVIDIA HGX H200 datasheet: 8 GPUs, NVLink4 900 GB/s per GPU through NVSwitch";
        s.cpu = {"Intel Xeon (Firecracker guest, 128 vCPUs)", 1, 128, 0};
        s.cpu_source = "the lent 8-GPU H200 machine: 128 CPU cores (device/KINDS.md)";
        all.push_back(s);
    }
    for (const System& s : all) s.validate();
}

inline std::vector<System> make_builtin_systems() {
    std::vector<System> all;
    add_volta_servers(all);
    add_pcie_systems(all);
    add_ampere_hopper_servers(all);
    return all;
}
}  // namespace detail

/// Every built-in system (SPEC.md §6 ids).
inline const std::vector<System>& builtin_systems() {
    static const std::vector<System> all = detail::make_builtin_systems();
    return all;
}

/// The system with this id (case-insensitive) among `systems`; unknown ids are an error with close matches.
inline const System& find_system(std::string_view id, std::span<const System> systems) {
    for (const System& s : systems)
        if (s.answers_to(id)) return s;
    std::vector<std::string> ids;
    for (const System& s : systems) ids.emplace_back(s.id.view());
    std::string message = detail::cat("unknown system '", id, "'");
    if (const std::string hint = did_you_mean(id, ids, 3); !hint.empty()) message += "; " + hint;
    message += " Known systems:";
    for (const std::string& s : ids) message += " " + s;
    detail::fail_about("system", message);
}

/// The built-in system with this id (case-insensitive); unknown ids are an error with close matches.
inline const System& find_system(std::string_view id) { return find_system(id, builtin_systems()); }

}  // namespace roofplan
